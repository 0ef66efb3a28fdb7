/// Writes one JSON object in canonical form without building a ``JSONValue`` tree first: the
/// same bytes as `JSONValue.object(...).canonicalText()`, for hot paths such as outbox payloads.
/// Keys must be added in ascending order.
public struct CanonicalJSONObject {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var lastKey: String?

    public init() {}

    public mutating func add(_ key: String, _ value: JSONValue) {
        if let lastKey {
            precondition(lastKey < key, "canonical JSON keys must be added in order: \(key) after \(lastKey)")
            bytes.append(UInt8(ascii: ","))
        }
        JSONValue.string(key).write(to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        value.write(to: &bytes)
        lastKey = key
    }

    public var text: String {
        String(decoding: bytes + [UInt8(ascii: "}")], as: UTF8.self)
    }
}
