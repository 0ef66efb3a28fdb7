/// A JSON document read with the place of every value and member name: for small files people
/// write by hand (the service's configuration), whose errors should name the line to fix.
public struct LocatedJSON: Sendable {
    /// The value, whole.
    public var value: JSONValue
    /// Where the value starts: 1-based line and column.
    public var line: Int
    public var column: Int
    /// An object's members in document order (a repeated name appears twice; the last counts,
    /// as in ``value``); empty for anything else.
    public var members: [Member] = []
    /// An array's items; empty for anything else.
    public var items: [LocatedJSON] = []

    /// A member of an object, with where its name is written.
    public struct Member: Sendable {
        public var name: String
        public var line: Int
        public var column: Int
        public var value: LocatedJSON
    }

    /// The last member called `name`, if any.
    public subscript(name: String) -> Member? {
        members.last { $0.name == name }
    }

    /// Parses one document (strict RFC 8259, as ``JSONParser``).
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> LocatedJSON {
        var scanner = JSONScanner(bytes)
        let document = try read(&scanner)
        try scanner.finish()
        return document
    }

    private static func read(_ scanner: inout JSONScanner) throws(JSONSyntaxError) -> LocatedJSON {
        let (line, column) = scanner.location(ofOffset: scanner.nextValueOffset())
        switch scanner.nextKind() {
        case .object?:
            try scanner.enterObject()
            var members: [Member] = []
            var object: [String: JSONValue] = [:]
            while let name = try scanner.nextMember() {
                let (nameLine, nameColumn) = scanner.location(ofOffset: scanner.memberOffset)
                let value = try read(&scanner)
                members.append(Member(name: name, line: nameLine, column: nameColumn, value: value))
                object[name] = value.value
            }
            return LocatedJSON(value: .object(object), line: line, column: column, members: members)
        case .array?:
            try scanner.enterArray()
            var items: [LocatedJSON] = []
            while try scanner.nextItem() { items.append(try read(&scanner)) }
            return LocatedJSON(value: .array(items.map(\.value)), line: line, column: column, items: items)
        default:
            return LocatedJSON(value: try scanner.readValue(), line: line, column: column)
        }
    }
}
