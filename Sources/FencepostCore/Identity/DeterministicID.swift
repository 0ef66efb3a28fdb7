import Crypto
import Foundation

/// Name-based UUIDs (version 5, RFC 9562): the same name gives the same id on every machine,
/// which is what lets a re-run or a second machine recognise an event it already has.
public enum DeterministicID {
    /// Fencepost's own namespace for v5 UUIDs.
    static let namespace: [UInt8] = [
        0x6F, 0x1C, 0x2A, 0x9E, 0x3B, 0x7D, 0x5E, 0x42, 0x9A, 0x10, 0xF3, 0xC8, 0xD2, 0xB4, 0xE7, 0x01,
    ]

    /// The UUID for a name made of parts (joined with a unit separator), lowercase.
    public static func uuid(_ parts: String...) -> String {
        uuid(parts: parts)
    }

    public static func uuid(parts: [String]) -> String {
        uuid(namespace: namespace, name: parts.joined(separator: "\u{1F}"))
    }

    /// RFC 9562 version 5: SHA-1 of namespace and name, with version and variant bits set.
    static func uuid(namespace: [UInt8], name: String) -> String {
        var hasher = Insecure.SHA1()
        hasher.update(data: namespace)
        hasher.update(data: Data(name.utf8))
        var bytes = Array(hasher.finalize().prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50  // version 5
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// An event's id: device, region, kind and time (to the millisecond).
    public static func event(device: String, region: String, kind: String, time: Double) -> String {
        uuid(device, region, kind, Timestamp.format(milliseconds: Timestamp.milliseconds(time)))
    }

    /// A visit's id: device, region and enter time.
    public static func visit(device: String, region: String, enteredAt: Double) -> String {
        event(device: device, region: region, kind: "visit", time: enteredAt)
    }
}

extension Timestamp {
    /// Seconds since the epoch, rounded to whole milliseconds.
    public static func milliseconds(_ seconds: Double) -> Int64 {
        Int64((seconds * 1000).rounded())
    }

    /// Formats seconds since the epoch.
    public static func format(seconds: Double) -> String {
        format(milliseconds: milliseconds(seconds))
    }
}
