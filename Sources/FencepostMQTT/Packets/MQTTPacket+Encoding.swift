package import NIOCore

extension MQTTPacket {
    /// Writes the packet: the fixed header (type, flags, remaining length) and its body.
    /// Strings longer than 65,535 bytes and bodies past the protocol's 268,435,455 bytes are
    /// programming errors here: the client checks what it is asked to send first.
    package func write(to buffer: inout ByteBuffer) {
        var body = ByteBuffer()
        var flags: UInt8 = 0
        switch self {
        case .connect(let connect):
            body.writeMQTTString("MQTT")
            body.writeInteger(UInt8(4))  // protocol level: 3.1.1
            var connectFlags: UInt8 = connect.cleanSession ? 0x02 : 0
            if connect.username != nil { connectFlags |= 0x80 }
            if connect.password != nil { connectFlags |= 0x40 }
            body.writeInteger(connectFlags)
            body.writeInteger(connect.keepAliveSeconds)
            body.writeMQTTString(connect.clientID)
            if let username = connect.username { body.writeMQTTString(username) }
            if let password = connect.password { body.writeMQTTString(password) }
        case .connack(let sessionPresent, let returnCode):
            body.writeInteger(UInt8(sessionPresent ? 1 : 0))
            body.writeInteger(returnCode)
        case .publish(let publish):
            flags = publish.qos.rawValue << 1 | (publish.duplicate ? 0x08 : 0) | (publish.retain ? 0x01 : 0)
            body.writeMQTTString(publish.topic)
            if publish.qos != .atMostOnce { body.writeInteger(publish.packetID ?? 0) }
            body.writeBytes(publish.payload)
        case .puback(let packetID):
            body.writeInteger(packetID)
        case .subscribe(let packetID, let filters):
            flags = 0x02
            body.writeInteger(packetID)
            for subscription in filters {
                body.writeMQTTString(subscription.filter)
                body.writeInteger(subscription.qos.rawValue)
            }
        case .suback(let packetID, let returnCodes):
            body.writeInteger(packetID)
            body.writeBytes(returnCodes)
        case .pingreq, .pingresp, .disconnect:
            break
        }
        buffer.writeInteger(kind.rawValue << 4 | flags)
        buffer.writeMQTTRemainingLength(body.readableBytes)
        buffer.writeBuffer(&body)
    }

    /// The packet's bytes on the wire.
    package var bytes: [UInt8] {
        var buffer = ByteBuffer()
        write(to: &buffer)
        return Array(buffer.readableBytesView)
    }
}

extension ByteBuffer {
    /// A UTF-8 string with its 16-bit length first (section 1.5.3).
    mutating func writeMQTTString(_ text: String) {
        let utf8 = Array(text.utf8)
        precondition(utf8.count <= Int(UInt16.max), "an MQTT string is at most 65,535 bytes")
        writeInteger(UInt16(utf8.count))
        writeBytes(utf8)
    }

    /// The remaining length: 7 bits a byte, low first, the high bit saying more follow.
    mutating func writeMQTTRemainingLength(_ length: Int) {
        precondition(length <= MQTTLimits.maximumRemainingLength, "an MQTT packet is at most 256 MiB")
        var rest = length
        repeat {
            var byte = UInt8(rest & 0x7F)
            rest >>= 7
            if rest > 0 { byte |= 0x80 }
            writeInteger(byte)
        } while rest > 0
    }
}

/// The protocol's own bounds.
package enum MQTTLimits {
    /// Four bytes of remaining length carry at most this (section 2.2.3).
    package static let maximumRemainingLength = 268_435_455
}
