import Crypto

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
        // The namespace and the name gathered on the stack and hashed in one update: an update
        // per part and separator cost more than the hashing (scan and ingest make two ids an
        // event).
        var length = namespace.count + max(parts.count - 1, 0)
        for part in parts { length += part.utf8.count }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { buffer in
            var at = namespace.withUnsafeBufferPointer { namespace in
                UnsafeMutableBufferPointer(rebasing: buffer[..<namespace.count]).initialize(fromContentsOf: namespace)
            }
            for (index, part) in parts.enumerated() {
                if index > 0 {
                    buffer.initializeElement(at: at, to: 0x1F)
                    at += 1
                }
                var part = part
                at = part.withUTF8 { bytes in
                    at
                        + UnsafeMutableBufferPointer(rebasing: buffer[at..<at + bytes.count]).initialize(
                            fromContentsOf: bytes)
                }
            }
            var hasher = Insecure.SHA1()
            hasher.update(bufferPointer: UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[..<at])))
            return text(hasher.finalize())
        }
    }

    /// RFC 9562 version 5: SHA-1 of namespace and name, with version and variant bits set.
    static func uuid(namespace: [UInt8], name: String) -> String {
        var hasher = Insecure.SHA1()
        namespace.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        var name = name
        name.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        return text(hasher.finalize())
    }

    /// The first 16 bytes of a digest as a version 5 UUID's text, written straight into the
    /// string: ingest makes two ids per event.
    private static func text(_ digest: Insecure.SHA1Digest) -> String {
        digest.withUnsafeBytes { digest in
            String(unsafeUninitializedCapacity: 36) { text in
                let digits: StaticString = "0123456789abcdef"
                var at = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    var byte = digest[index]
                    if index == 6 { byte = (byte & 0x0F) | 0x50 }  // version 5
                    if index == 8 { byte = (byte & 0x3F) | 0x80 }  // RFC 9562 variant
                    text[at] = digits.utf8Start[Int(byte >> 4)]
                    text[at + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    at += 2
                }
                return at
            }
        }
    }

    /// An event's id: device, region, kind and time (to the millisecond).
    public static func event(device: String, region: String, kind: EventKind, time: Double) -> String {
        uuid(device, region, kind.rawValue, Timestamp.format(milliseconds: Timestamp.milliseconds(time)))
    }

    /// A visit's id: device, region and enter time. Its name is laid out as an event's with
    /// `visit` where the kind goes (no event kind is named so): the ids stores already hold.
    public static func visit(device: String, region: String, enteredAt: Double) -> String {
        uuid(device, region, "visit", Timestamp.format(milliseconds: Timestamp.milliseconds(enteredAt)))
    }
}

extension Timestamp {
    /// Seconds since the epoch, rounded to whole milliseconds. Total: a time past ±8.64e15 ms
    /// (ECMAScript's range, ±273,790 years) is held at that bound and NaN is 0, so no time from
    /// outside can trap here; the fix filter refuses such times long before they are stored.
    public static func milliseconds(_ seconds: Double) -> Int64 {
        let milliseconds = (seconds * 1000).rounded()
        guard !milliseconds.isNaN else { return 0 }
        return Int64(min(max(milliseconds, -maximumMilliseconds), maximumMilliseconds))
    }

    /// The largest number of milliseconds ``milliseconds(_:)`` gives either side of the epoch.
    public static let maximumMilliseconds: Double = 8.64e15

    /// Formats seconds since the epoch.
    public static func format(seconds: Double) -> String {
        format(milliseconds: milliseconds(seconds))
    }
}
