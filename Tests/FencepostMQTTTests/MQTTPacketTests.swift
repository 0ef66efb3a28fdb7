import FencepostMQTT
import NIOCore
import Testing

/// The packet codec against the bytes of MQTT 3.1.1 (OASIS standard, sections 2 and 3).
@Suite struct MQTTPacketTests {
    private func decode(_ bytes: [UInt8], maximumSize: Int = 1 << 20) throws -> MQTTPacket? {
        var buffer = ByteBuffer(bytes: bytes)
        return try MQTTPacket.read(from: &buffer, maximumSize: maximumSize)
    }

    @Test func connectIsWrittenAsTheStandardSays() {
        let connect = MQTTPacket.connect(
            MQTTConnect(clientID: "fp", username: "u", password: "p", cleanSession: false, keepAliveSeconds: 30))
        // 0x10, length 20; "MQTT", level 4, flags user+password (clean session off), keep-alive 30.
        #expect(
            connect.bytes == [
                0x10, 20, 0, 4, 0x4D, 0x51, 0x54, 0x54, 4, 0xC0, 0, 30, 0, 2, 0x66, 0x70, 0, 1, 0x75, 0, 1, 0x70,
            ])
    }

    @Test func subscribeHasItsReservedFlagsAndQoS() {
        let subscribe = MQTTPacket.subscribe(packetID: 7, filters: [MQTTSubscription(filter: "a/+", qos: .atLeastOnce)])
        #expect(subscribe.bytes == [0x82, 8, 0, 7, 0, 3, 0x61, 0x2F, 0x2B, 1])
    }

    @Test func serverPacketsAreRead() throws {
        #expect(try decode([0x20, 2, 1, 0]) == .connack(sessionPresent: true, returnCode: 0))
        #expect(try decode([0x40, 2, 0x12, 0x34]) == .puback(packetID: 0x1234))
        #expect(try decode([0x90, 3, 0, 1, 1]) == .suback(packetID: 1, returnCodes: [1]))
        #expect(try decode([0xD0, 0]) == .pingresp)
        let publish = MQTTPublish(
            topic: "owntracks/a/b", payload: Array("{}".utf8), qos: .atLeastOnce, packetID: 9, duplicate: true)
        #expect(try decode(MQTTPacket.publish(publish).bytes) == .publish(publish))
        let atMostOnce = MQTTPublish(topic: "t", payload: [1, 2, 3], qos: .atMostOnce, retain: true)
        #expect(try decode(MQTTPacket.publish(atMostOnce).bytes) == .publish(atMostOnce))
    }

    @Test func aPacketInPiecesWaitsForTheRest() throws {
        let bytes = MQTTPacket.publish(
            MQTTPublish(topic: "t/u/v", payload: Array(repeating: 7, count: 300), qos: .atLeastOnce, packetID: 1)
        ).bytes
        for cut in [0, 1, 2, 3, bytes.count - 1] {
            var buffer = ByteBuffer(bytes: bytes.prefix(cut))
            #expect(try MQTTPacket.read(from: &buffer, maximumSize: 1 << 20) == nil)
            #expect(buffer.readableBytes == cut, "nothing consumed")
        }
        var buffer = ByteBuffer(bytes: bytes + [0xD0, 0])
        #expect(try MQTTPacket.read(from: &buffer, maximumSize: 1 << 20)?.kind == .publish)
        #expect(try MQTTPacket.read(from: &buffer, maximumSize: 1 << 20) == .pingresp)
    }

    @Test func anOversizedPacketIsRefusedBeforeItsBodyArrives() {
        // Remaining length 2,000,000 (0x80 0x89 0x7A), then nothing of the body.
        #expect(throws: MQTTProtocolError.self) { try decode([0x30, 0x80, 0x89, 0x7A], maximumSize: 1 << 20) }
        #expect(throws: MQTTProtocolError.self) { try decode([0x30, 0x80, 0x80, 0x80, 0x80, 0x01]) }
    }

    @Test(
        arguments: [
            [0x20, 2, 2, 0],  // connack with reserved flag bits
            [0x20, 1, 0],  // connack cut short
            [0x41, 2, 0, 1],  // puback with flags
            [0x40, 2, 0, 0],  // packet identifier 0
            [0x40, 3, 0, 1, 9],  // bytes past the end
            [0x36, 5, 0, 1, 0x74, 0, 1],  // publish with QoS 2
            [0x38, 3, 0, 1, 0x74],  // QoS 0 marked duplicate
            [0x32, 3, 0, 1, 0x2B, 0, 1],  // wildcard in a publish topic... (length mismatch too)
            [0x30, 4, 0, 2, 0xC3, 0x28],  // topic not UTF-8
            [0x30, 3, 0, 1, 0x00],  // NUL in a topic
            [0x30, 0],  // publish without a topic
            [0x00, 0],  // type 0 does not exist
            [0xF0, 0],  // type 15 does not exist
            [0x10, 0],  // CONNECT from a broker
            [0x50, 2, 0, 1],  // PUBREC: QoS 2 is not asked for
            [0x90, 2, 0, 1],  // suback without return codes
            [0x90, 3, 0, 1, 7],  // suback with an unknown return code
        ] as [[UInt8]])
    func malformedPacketsAreRefusedWithAReason(_ bytes: [UInt8]) throws {
        let error = #expect(throws: MQTTProtocolError.self) { try decode(bytes) }
        #expect(error?.reason.isEmpty == false)
    }

    @Test func urlsAreReadWithTheirDefaultPorts() throws {
        #expect(try MQTTConfiguration.endpoint(of: "mqtt://broker.example").get() == ("broker.example", 1883, false))
        #expect(try MQTTConfiguration.endpoint(of: "mqtts://h:8884").get() == ("h", 8884, true))
        #expect(try MQTTConfiguration.endpoint(of: "mqtt://[::1]:1900").get() == ("::1", 1900, false))
        for bad in ["http://h", "mqtt://", "mqtt://h:0", "mqtt://h:x", "mqtt://u:p@h", "mqtt://h/path"] {
            #expect(throws: MQTTProtocolError.self, "\(bad)") { try MQTTConfiguration.endpoint(of: bad).get() }
        }
    }
}
