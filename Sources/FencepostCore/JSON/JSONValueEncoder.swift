/// Encodes an `Encodable` value as a ``JSONValue``, so that a report or an API answer declares
/// its fields once, as a type, and is written canonically like every other JSON we emit.
///
/// Numbers of every integer and floating-point type become `.number`; a `nil` optional is left
/// out (as `encodeIfPresent` does) unless the type writes `null` itself (`encodeNil`, or a
/// ``JSONValue`` property holding `.null`); a ``JSONValue`` is taken as it is; dictionaries
/// keyed by `String` become objects.
public enum JSONValueEncoder {
    public static func encode(_ value: some Encodable) throws -> JSONValue {
        let root = Node()
        try root.encode(value, codingPath: [])
        return root.value
    }

    /// Encodes and writes canonical JSON text.
    public static func canonicalText(_ value: some Encodable) throws -> String {
        try encode(value).canonicalText()
    }
}

/// One value being encoded; containers fill it in place (members and items are appended to
/// stored arrays, never copied out of an enum and back).
private final class Node {
    private enum Kind {
        case value, object, array
    }

    private var kind = Kind.value
    private var scalar = JSONValue.null
    private var members: [(String, Node)] = []
    private var items: [Node] = []

    var value: JSONValue {
        switch kind {
        case .value: return scalar
        case .object:
            return .object(Dictionary(members.map { ($0.0, $0.1.value) }, uniquingKeysWith: { _, last in last }))
        case .array: return .array(items.map(\.value))
        }
    }

    func set(_ value: JSONValue) {
        kind = .value
        scalar = value
    }

    func encode(_ value: some Encodable, codingPath: [any CodingKey]) throws {
        switch value {
        case let json as JSONValue: set(json)
        case let string as String: set(.string(string))
        case let bool as Bool: set(.bool(bool))
        case let number as any BinaryInteger: set(.number(Self.double(number)))
        case let number as any BinaryFloatingPoint: set(.number(Self.double(number)))
        default: try value.encode(to: NodeEncoder(node: self, codingPath: codingPath))
        }
    }

    private static func double(_ number: some BinaryInteger) -> Double { Double(number) }
    private static func double(_ number: some BinaryFloatingPoint) -> Double { Double(number) }

    /// Makes this node an object (once) and adds a member.
    func member(_ key: String) -> Node {
        becomeObject()
        let child = Node()
        members.append((key, child))
        return child
    }

    func becomeObject() {
        guard kind != .object else { return }
        kind = .object
        members = []
    }

    /// Makes this node an array (once) and appends an item.
    func item() -> Node {
        becomeArray()
        let child = Node()
        items.append(child)
        return child
    }

    func becomeArray() {
        guard kind != .array else { return }
        kind = .array
        items = []
    }

    var count: Int { kind == .array ? items.count : 0 }
}

private struct NodeEncoder: Encoder {
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(KeyedNodeContainer(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return UnkeyedNodeContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleNodeContainer(node: node, codingPath: codingPath)
    }
}

private struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws {
        node.member(key.stringValue).set(.null)
    }

    mutating func encode(_ value: some Encodable, forKey key: Key) throws {
        try node.member(key.stringValue).encode(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let child = node.member(key.stringValue)
        child.becomeObject()
        return KeyedEncodingContainer(KeyedNodeContainer<NestedKey>(node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = node.member(key.stringValue)
        child.becomeArray()
        return UnkeyedNodeContainer(node: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(node: node.member("super"), codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    var count: Int { node.count }

    mutating func encodeNil() throws {
        node.item().set(.null)
    }

    mutating func encode(_ value: some Encodable) throws {
        try node.item().encode(value, codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        let child = node.item()
        child.becomeObject()
        return KeyedEncodingContainer(KeyedNodeContainer<NestedKey>(node: child, codingPath: codingPath))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = node.item()
        child.becomeArray()
        return UnkeyedNodeContainer(node: child, codingPath: codingPath)
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(node: node.item(), codingPath: codingPath)
    }
}

private struct SingleNodeContainer: SingleValueEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws {
        node.set(.null)
    }

    mutating func encode(_ value: some Encodable) throws {
        try node.encode(value, codingPath: codingPath)
    }
}

/// So report types may hold free-form JSON (region properties, counts keyed at run time).
extension JSONValue: Encodable {
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let bool):
            var container = encoder.singleValueContainer()
            try container.encode(bool)
        case .number(let number):
            var container = encoder.singleValueContainer()
            try container.encode(number)
        case .string(let string):
            var container = encoder.singleValueContainer()
            try container.encode(string)
        case .array(let items):
            var container = encoder.unkeyedContainer()
            for item in items { try container.encode(item) }
        case .object(let members):
            var container = encoder.container(keyedBy: MemberKey.self)
            for (key, value) in members { try container.encode(value, forKey: MemberKey(stringValue: key)) }
        }
    }

    private struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension Dictionary where Key: RawRepresentable, Key.RawValue == String {
    /// The same values keyed by the keys' names, as a JSON object keys them.
    public var byRawValue: [String: Value] {
        [String: Value](uniqueKeysWithValues: map { ($0.key.rawValue, $0.value) })
    }
}
