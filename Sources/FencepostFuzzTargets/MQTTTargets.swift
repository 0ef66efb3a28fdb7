import FencepostCore
import FencepostFormats
import FencepostMQTT
import FencepostService
import NIOCore

/// What `serve` reads from its MQTT broker: the packet stream, and OwnTracks messages in it.
enum MQTTTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget(
            "mqtt-packets", "the MQTT packet decoder: packets read from a byte stream, written and read again",
            packets),
        FuzzTarget("owntracks-mqtt", "an OwnTracks message on owntracks/user/phone, maybe encrypted", ownTracks),
    ]

    /// Reads packets until the bytes run out or one is refused; each read packet, written,
    /// reads back as the same packet.
    static func packets(_ bytes: [UInt8]) -> FuzzOutcome {
        var buffer = ByteBuffer(bytes: bytes)
        var count = 0
        while true {
            let packet: MQTTPacket?
            do {
                packet = try MQTTPacket.read(from: &buffer, maximumSize: 1 << 16)
            } catch {
                return count > 0 ? .accepted(count) : .refused
            }
            guard let packet else { return count > 0 ? .accepted(count) : .refused }
            var again = ByteBuffer(bytes: packet.bytes)
            guard (try? MQTTPacket.read(from: &again, maximumSize: 1 << 16)) == packet, again.readableBytes == 0 else {
                violated("a packet does not read back as itself: \(packet)")
            }
            count += 1
        }
    }

    static func ownTracks(_ bytes: [UInt8]) -> FuzzOutcome {
        do {
            let message = try OwnTracksMessage(
                topic: "owntracks/user/phone", payload: bytes, keys: OwnTracksKeys(secrets: ["user": "key"]))
            PayloadTargets.checkFixes(message.fixes)
            return .accepted(max(1, message.fixes.count))
        } catch {
            return .refused
        }
    }
}
