/// Base64 (RFC 4648's standard alphabet) decoded from bytes, for basic-auth headers: one pass
/// with a table, no Foundation `Data` on a request's path.
enum Base64 {
    /// The bytes `text` encodes, or nil when it is not base64: a character outside the
    /// alphabet, or a length no encoding has. Padding (`=`) is accepted only at the end, and may
    /// be left out; the bits of a last character beyond its bytes are ignored, as Foundation does.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var characters = text.count
        var padding = 0
        var reversed = text.reversed().makeIterator()
        while padding < 2, reversed.next() == UInt8(ascii: "=") { padding += 1 }
        characters -= padding
        guard characters % 4 != 1, padding == 0 || (characters + padding) % 4 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters * 3 / 4)
        var accumulated: UInt32 = 0
        var bits = 0
        for character in text.prefix(characters) {
            let value = values[Int(character)]
            guard value < 64 else { return nil }
            accumulated = accumulated << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulated >> UInt32(bits)))
            }
        }
        return bytes
    }

    /// Each byte's value in the alphabet; 255 for a byte outside it.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 255, count: 256)
        for (value, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(character)] = UInt8(value)
        }
        return table
    }()
}
