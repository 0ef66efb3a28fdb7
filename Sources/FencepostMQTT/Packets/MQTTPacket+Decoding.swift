package import NIOCore

extension MQTTPacket {
    /// Reads one packet from the front of `buffer`: nil (nothing consumed) while it is not
    /// complete; a packet whose remaining length is past `maximumSize` is refused as soon as its
    /// length is read, before its body is waited for. Anything malformed throws
    /// ``MQTTProtocolError`` with the reason.
    package static func read(from buffer: inout ByteBuffer, maximumSize: Int) throws(MQTTProtocolError)
        -> MQTTPacket?
    {
        let view = buffer.readableBytesView
        guard let first = view.first else { return nil }
        var length = 0
        var multiplier = 1
        var headerBytes = 1
        while true {
            guard headerBytes < view.count else { return nil }
            let byte = view[view.startIndex + headerBytes]
            headerBytes += 1
            length += Int(byte & 0x7F) * multiplier
            if byte & 0x80 == 0 { break }
            guard headerBytes < 5 else { throw MQTTProtocolError("the remaining length runs past four bytes") }
            multiplier *= 128
        }
        guard length <= maximumSize else {
            throw MQTTProtocolError("a packet of \(length) bytes, past the limit of \(maximumSize)")
        }
        guard view.count >= headerBytes + length else { return nil }
        buffer.moveReaderIndex(forwardBy: headerBytes)
        var body = buffer.readSlice(length: length)!
        return try parse(first: first, body: &body)
    }

    /// The packet of type and flags `first` from its whole body.
    private static func parse(first: UInt8, body: inout ByteBuffer) throws(MQTTProtocolError) -> MQTTPacket {
        let flags = first & 0x0F
        guard let kind = Kind(rawValue: first >> 4) else {
            throw MQTTProtocolError("packet type \(first >> 4) does not exist")
        }
        let expectedFlags: UInt8 = kind == .subscribe || kind == .pubrel || kind == .unsubscribe ? 0x02 : 0
        if kind != .publish, flags != expectedFlags {
            throw MQTTProtocolError("\(kind) with flags \(flags), not \(expectedFlags)")
        }
        let packet: MQTTPacket
        switch kind {
        case .connack:
            let acknowledge = try body.readMQTTByte(kind)
            guard acknowledge & 0xFE == 0 else { throw MQTTProtocolError("connack with reserved flags set") }
            packet = .connack(sessionPresent: acknowledge == 1, returnCode: try body.readMQTTByte(kind))
        case .publish:
            packet = .publish(try readPublish(flags: flags, body: &body))
        case .puback:
            packet = .puback(packetID: try body.readPacketID(kind))
        case .subscribe:
            let packetID = try body.readPacketID(kind)
            var filters: [MQTTSubscription] = []
            while body.readableBytes > 0 {
                let filter = try body.readMQTTString(kind)
                guard let qos = MQTTQoS(rawValue: try body.readMQTTByte(kind)) else {
                    throw MQTTProtocolError("subscribe asks for a QoS this client does not know")
                }
                filters.append(MQTTSubscription(filter: filter, qos: qos))
            }
            guard !filters.isEmpty else { throw MQTTProtocolError("subscribe without a topic filter") }
            packet = .subscribe(packetID: packetID, filters: filters)
        case .suback:
            let packetID = try body.readPacketID(kind)
            let codes = body.readBytes(length: body.readableBytes) ?? []
            guard !codes.isEmpty, codes.allSatisfy({ $0 <= 2 || $0 == 0x80 }) else {
                throw MQTTProtocolError("suback without valid return codes")
            }
            packet = .suback(packetID: packetID, returnCodes: codes)
        case .pingreq: packet = .pingreq
        case .pingresp: packet = .pingresp
        case .disconnect: packet = .disconnect
        case .connect, .pubrec, .pubrel, .pubcomp, .unsubscribe, .unsuback:
            // CONNECT and UNSUBSCRIBE go to a broker; the rest are QoS 2's, never asked for.
            throw MQTTProtocolError("unexpected \(kind) packet")
        }
        guard body.readableBytes == 0 else {
            throw MQTTProtocolError("\(kind) has \(body.readableBytes) bytes past its end")
        }
        return packet
    }

    private static func readPublish(flags: UInt8, body: inout ByteBuffer) throws(MQTTProtocolError) -> MQTTPublish {
        guard let qos = MQTTQoS(rawValue: (flags >> 1) & 0x03) else {
            throw MQTTProtocolError("publish with QoS \((flags >> 1) & 0x03); at most 1 is subscribed to")
        }
        let duplicate = flags & 0x08 != 0
        guard qos != .atMostOnce || !duplicate else { throw MQTTProtocolError("a QoS 0 publish marked duplicate") }
        let topic = try body.readMQTTString(.publish)
        guard !topic.isEmpty, !topic.contains(where: { $0 == "+" || $0 == "#" }) else {
            throw MQTTProtocolError("publish to an empty topic or one with wildcards")
        }
        let packetID = qos == .atMostOnce ? nil : try body.readPacketID(.publish)
        return MQTTPublish(
            topic: topic, payload: body.readBytes(length: body.readableBytes) ?? [], qos: qos, packetID: packetID,
            duplicate: duplicate, retain: flags & 0x01 != 0)
    }
}

extension ByteBuffer {
    fileprivate mutating func readMQTTByte(_ kind: MQTTPacket.Kind) throws(MQTTProtocolError) -> UInt8 {
        guard let byte = readInteger(as: UInt8.self) else { throw MQTTProtocolError("\(kind) is cut short") }
        return byte
    }

    /// A packet identifier: non-zero (section 2.3.1).
    fileprivate mutating func readPacketID(_ kind: MQTTPacket.Kind) throws(MQTTProtocolError) -> UInt16 {
        guard let id = readInteger(as: UInt16.self) else { throw MQTTProtocolError("\(kind) is cut short") }
        guard id != 0 else { throw MQTTProtocolError("\(kind) with packet identifier 0") }
        return id
    }

    /// A length-prefixed string: valid UTF-8 without NUL (section 1.5.3).
    fileprivate mutating func readMQTTString(_ kind: MQTTPacket.Kind) throws(MQTTProtocolError) -> String {
        guard let length = readInteger(as: UInt16.self), let bytes = readBytes(length: Int(length)) else {
            throw MQTTProtocolError("\(kind) is cut short in a string")
        }
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
            throw MQTTProtocolError("\(kind) has a string that is not valid UTF-8")
        }
        return text
    }
}
