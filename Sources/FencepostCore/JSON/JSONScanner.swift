import Foundation

/// A cursor over JSON text (RFC 8259, strict) that reads one value at a time, either whole as a
/// ``JSONValue`` tree or, for large regular documents, member by member and item by item without
/// building the containers. Errors carry the line and column.
///
/// Walking an object: ``enterObject()``, then ``nextMember()`` until it returns nil, reading
/// each member's value (``readValue()``, or walking it in turn) before asking for the next.
/// Arrays likewise with ``enterArray()`` and ``nextItem()``.
public struct JSONScanner {
    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    /// True right after a container is entered: no ',' before its first member or item.
    private var atContainerStart = false
    private static let maximumDepth = 512
    /// Where the name of the member ``nextMember()`` last returned starts (its opening quote),
    /// as a byte offset; ``location(ofOffset:)`` turns it into a line and column.
    public private(set) var memberOffset = 0

    /// The kinds of JSON value, told from a value's first character.
    public enum Kind: Sendable {
        case object, array, string, number, bool, null
    }

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }  // tolerate a UTF-8 byte order mark
    }

    /// The kind of the next value, or nil at the end of input or before a character that
    /// starts no value (reading it then names the error).
    public mutating func nextKind() -> Kind? {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "{")?: return .object
        case UInt8(ascii: "[")?: return .array
        case UInt8(ascii: "\"")?: return .string
        case UInt8(ascii: "t")?, UInt8(ascii: "f")?: return .bool
        case UInt8(ascii: "n")?: return .null
        case UInt8(ascii: "-")?, (UInt8(ascii: "0")...UInt8(ascii: "9"))?: return .number
        default: return nil
        }
    }

    /// Checks that nothing but whitespace follows.
    public mutating func finish() throws(JSONSyntaxError) {
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected text after the JSON value") }
    }

    // MARK: - Values

    /// The next value, whole.
    public mutating func readValue() throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            try enterObject()
            var members: [String: JSONValue] = [:]
            while let key = try nextMember() { members[key] = try readValue() }
            return .object(members)
        case UInt8(ascii: "["):
            try enterArray()
            var items: [JSONValue] = []
            while try nextItem() { items.append(try readValue()) }
            return .array(items)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected character \(describe(bytes[index])), expected a value")
        }
    }

    // MARK: - Walking containers

    /// Reads the `{` that opens the next value.
    public mutating func enterObject() throws(JSONSyntaxError) {
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else { throw error("expected an object") }
        try enter()
    }

    /// The name of the object's next member, the scanner then standing at its value; nil once
    /// the closing `}` is read.
    public mutating func nextMember() throws(JSONSyntaxError) -> String? {
        guard let name = try nextMemberUTF8() else { return nil }
        return String(decoding: name, as: UTF8.self)  // validated
    }

    /// ``nextMember()``'s name as UTF-8 bytes (escapes resolved), for comparing without making
    /// a `String`.
    public mutating func nextMemberUTF8() throws(JSONSyntaxError) -> ArraySlice<UInt8>? {
        skipWhitespace()
        if !atContainerStart || peek() == UInt8(ascii: "}") {
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                leave()
                return nil
            case nil: throw error("unexpected end of input inside an object")
            case let byte?: throw error("unexpected character \(describe(byte)), expected ',' or '}'")
            }
            skipWhitespace()
        }
        atContainerStart = false
        guard let next = peek() else { throw error("unexpected end of input inside an object") }
        guard next == UInt8(ascii: "\"") else {
            throw error("unexpected character \(describe(next)), expected a member name in double quotes")
        }
        memberOffset = index
        let key = try parseStringUTF8()
        if key.contains(where: { $0 >= 0x80 }),
            key.withUnsafeBufferPointer({ String(validating: $0, as: UTF8.self) }) == nil
        {
            throw error("string is not valid UTF-8")
        }
        skipWhitespace()
        guard peek() == UInt8(ascii: ":") else {
            throw error("expected ':' after member name \"\(String(decoding: key, as: UTF8.self))\"")
        }
        index += 1
        return key
    }

    /// Reads the `[` that opens the next value.
    public mutating func enterArray() throws(JSONSyntaxError) {
        skipWhitespace()
        guard peek() == UInt8(ascii: "[") else { throw error("expected an array") }
        try enter()
    }

    /// Whether the array has another item, the scanner then standing at it; false once the
    /// closing `]` is read.
    public mutating func nextItem() throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        if atContainerStart {
            atContainerStart = false
            if peek() == UInt8(ascii: "]") {
                leave()
                return false
            }
            return true
        }
        switch peek() {
        case UInt8(ascii: ","):
            index += 1
            return true
        case UInt8(ascii: "]"):
            leave()
            return false
        case nil: throw error("unexpected end of input inside an array")
        case let byte?: throw error("unexpected character \(describe(byte)), expected ',' or ']'")
        }
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw error("nested deeper than \(Self.maximumDepth) levels") }
        index += 1
        atContainerStart = true
    }

    private mutating func leave() {
        index += 1
        depth -= 1
        atContainerStart = false
    }

    // MARK: - Scalars

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        let utf8 = try parseStringUTF8()
        // Through a buffer pointer: validating a generic collection looks up type metadata at run time.
        guard let text = utf8.withUnsafeBufferPointer({ String(validating: $0, as: UTF8.self) }) else {
            throw error("string is not valid UTF-8")
        }
        return text
    }

    /// A string's bytes with its escapes resolved: a slice of the input when it has none.
    private mutating func parseStringUTF8() throws(JSONSyntaxError) -> ArraySlice<UInt8> {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            guard bytes[index] >= 0x20 else { throw error("control character in a string") }
            index += 1
        }
        guard index < bytes.count else { throw error("unterminated string") }
        if bytes[index] == UInt8(ascii: "\"") {
            index += 1
            return bytes[start..<index - 1]
        }
        var utf8 = Array(bytes[start..<index])
        while bytes[index] != UInt8(ascii: "\"") {
            // bytes[index] is a backslash
            index += 1
            guard index < bytes.count else { throw error("unterminated string") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): utf8.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): utf8.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"): utf8.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"): utf8.append(contentsOf: try parseUnicodeEscape())
            default: throw error("invalid escape \\\(describe(escape))")
            }
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
                guard bytes[index] >= 0x20 else { throw error("control character in a string") }
                utf8.append(bytes[index])
                index += 1
            }
            guard index < bytes.count else { throw error("unterminated string") }
        }
        index += 1  // closing quote
        return utf8[...]
    }

    private mutating func parseUnicodeEscape() throws(JSONSyntaxError) -> [UInt8] {
        var scalar = try parseHex4()
        if (0xD800...0xDBFF).contains(scalar) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw error("unpaired UTF-16 surrogate in \\u escape") }
            index += 2
            let low = try parseHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired UTF-16 surrogate in \\u escape") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
        return Array(String(Character(unicode)).utf8)
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("incomplete \\u escape") }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> Double {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), isDigit(first) else { throw error("invalid number: expected a digit") }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = peek(), isDigit(next) { throw error("invalid number: leading zero") }
        } else {
            skipDigits()
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard let next = peek(), isDigit(next) else { throw error("invalid number: expected a digit after '.'") }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let next = peek(), isDigit(next) else { throw error("invalid number: expected an exponent") }
            skipDigits()
        }
        guard let value = DecimalParser.parse(bytes[start..<index]), value.isFinite else {
            throw error("number \(String(decoding: bytes[start..<index], as: UTF8.self)) is out of range")
        }
        return value
    }

    private mutating func skipDigits() {
        while let byte = peek(), isDigit(byte) { index += 1 }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let expected = literal.withUTF8Buffer { Array($0) }
        guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw error("invalid literal, expected \(literal)")
        }
        index += expected.count
    }

    // MARK: - Helpers

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : String(format: "0x%02X", byte)
    }

    /// The error at the current position, with a 1-based line and column (in characters).
    private func error(_ reason: String) -> JSONSyntaxError {
        let (line, column) = location(ofOffset: index)
        return JSONSyntaxError(line: line, column: column, reason: reason)
    }

    /// The 1-based line and column (in characters) of a byte offset into the text.
    public func location(ofOffset offset: Int) -> (line: Int, column: Int) {
        let end = min(max(offset, 0), bytes.count)
        var line = 1
        var lineStart = 0
        for position in 0..<end where bytes[position] == 0x0A {
            line += 1
            lineStart = position + 1
        }
        return (line, String(decoding: bytes[lineStart..<end], as: UTF8.self).count + 1)
    }

    /// The byte offset the scanner stands at.
    public var offset: Int { index }

    /// The byte range of the next value, an object or array, the scanner then standing after
    /// it: found by matching brackets outside strings, without reading the value (its tokens
    /// are not checked), for text recognised by its bytes as already known to be valid. Nil,
    /// the scanner at the value still, for a scalar or brackets that do not close.
    public mutating func skipContainer() -> Range<Int>? {
        skipWhitespace()
        let start = index
        let end: Int? = bytes.withUnsafeBufferPointer { text in
            guard start < text.count, text[start] == UInt8(ascii: "{") || text[start] == UInt8(ascii: "[") else {
                return nil
            }
            var position = start
            var open = 0
            while position < text.count {
                switch text[position] {
                case UInt8(ascii: "\""):
                    position += 1
                    while position < text.count, text[position] != UInt8(ascii: "\"") {
                        position += text[position] == UInt8(ascii: "\\") ? 2 : 1
                    }
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    open += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    open -= 1
                    if open == 0 { return position + 1 }
                default:
                    break
                }
                position += 1
            }
            return nil
        }
        guard let end else { return nil }
        index = end
        atContainerStart = false
        return start..<end
    }

    /// Moves back to an offset inside the container being walked (where a value starts, as
    /// ``nextValueOffset()`` gave it), to read a value ``skipContainer()`` passed over.
    public mutating func seek(to offset: Int) {
        index = offset
        atContainerStart = false
    }

    /// Where the next value starts (after any whitespace), as a byte offset.
    public mutating func nextValueOffset() -> Int {
        skipWhitespace()
        return index
    }
}
