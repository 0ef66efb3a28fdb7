public import Foundation

/// Where and why JSON text failed to parse.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var reason: String

    public var description: String { "line \(line), column \(column): \(reason)" }
}

/// Parses whole JSON documents into ``JSONValue`` trees (strict RFC 8259, errors with line and
/// column), through a ``JSONScanner``.
///
/// Written for region configs and small documents held in memory; Foundation's parsers on
/// Linux report only a byte offset, and decoding an untyped tree through `JSONDecoder` is slow.
public enum JSONParser {
    /// Parses one JSON document; anything but whitespace after it is an error.
    public static func parse(_ data: Data) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(data))
    }

    /// Parses one JSON document from UTF-8 bytes.
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var scanner = JSONScanner(bytes)
        let value = try scanner.readValue()
        try scanner.finish()
        return value
    }
}
