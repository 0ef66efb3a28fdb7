/// A feature's properties as ``FeatureReader`` looks them up: by name, as the dictionary
/// would answer, but a name that none of the members can be is answered without hashing it.
/// A feature has a few of the twenty names read from it (a stored circle: `id`, `name` and
/// `radius`), and hashing each absent name was most of reading a million stored regions'
/// settings at a service's start-up.
struct FeatureProperties {
    let members: [String: JSONValue]
    /// The signature bits of every member's name; all of them when a name is not ASCII.
    private let signatures: UInt64

    init(_ members: [String: JSONValue]) {
        self.members = members
        var signatures: UInt64 = 0
        for name in members.keys {
            guard let signature = Self.signature(name) else {
                signatures = .max
                break
            }
            signatures |= signature
        }
        self.signatures = signatures
    }

    /// The member named `name`, or nil.
    subscript(name: String) -> JSONValue? {
        if let signature = Self.signature(name), signatures & signature == 0 { return nil }
        return members[name]
    }

    /// One of 64 bits, from an ASCII name's length and first byte; nil for a name with other
    /// bytes. Two ASCII strings are equal only byte for byte, so equal names have the same bit;
    /// a string with other characters may equal an ASCII one (the Kelvin sign is a K), so such
    /// names are always looked up.
    private static func signature(_ name: String) -> UInt64? {
        // The bytes read in place (a short name's from the string's own bits): walking the
        // UTF-8 view a byte at a time was a tenth of reading the settings.
        let utf8 = name.utf8
        let ascii =
            utf8.withContiguousStorageIfAvailable { bytes in bytes.reduce(0, |) < 0x80 }
            ?? utf8.allSatisfy { $0 < 0x80 }
        guard ascii else { return nil }
        return 1 << UInt64((utf8.count &* 31 &+ Int(utf8.first ?? 0)) & 63)
    }
}
