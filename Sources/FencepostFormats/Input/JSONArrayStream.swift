public import FencepostCore

/// Streams the elements of one array in a large JSON document, one parsed element at a time:
/// the `locations` of a Google Takeout Records.json, the `features` of a GeoJSON trace.
/// Only the element being read is in memory, so a multi-gigabyte document reads in flat memory.
public struct JSONArrayStream {
    private var window: ChunkWindow
    private let key: String
    private var inArray = false
    private var done = false
    /// Streams the array under `key` in the top-level object.
    public init(source: ByteSource, key: String) {
        window = ChunkWindow(source: source)
        self.key = key
    }

    /// The line reached, for error messages.
    public var line: Int { window.line }

    /// The next element, or nil after the last one.
    public mutating func next() throws(TraceReadError) -> JSONValue? {
        if done { return nil }
        if !inArray { try seekArray() }
        guard try skipWhitespace() else { throw failure("unexpected end of file inside the \(key) array") }
        if window.buffer[window.position] == UInt8(ascii: "]") {
            done = true
            return nil
        }
        if window.buffer[window.position] == UInt8(ascii: ",") {
            window.advance(by: 1)
            guard try skipWhitespace() else { throw failure("unexpected end of file inside the \(key) array") }
        }
        let startLine = line
        let end = try elementEnd()
        let bytes = Array(window.buffer[window.position..<end])
        window.advance(to: end)
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw TraceReadError(file: window.source.name, line: startLine + error.line - 1, reason: "invalid JSON: \(error.reason)")
        }
    }

    // MARK: - Scanning

    /// Moves past `"key": [` at depth 1 of the document.
    private mutating func seekArray() throws(TraceReadError) {
        let pattern = Array("\"\(key)\"".utf8)
        var depth = 0
        var inString = false
        var escaped = false
        while true {
            guard try window.ensure(pattern.count) else { throw failure("no \"\(key)\" array found") }
            let byte = window.buffer[window.position]
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                window.advance(by: 1)
                continue
            }
            if byte == UInt8(ascii: "\""), depth == 1, window.buffer[window.position..<(window.position + pattern.count)].elementsEqual(pattern) {
                window.advance(by: pattern.count)
                guard try skipWhitespace(), window.buffer[window.position] == UInt8(ascii: ":") else { throw failure("expected ':' after \"\(key)\"") }
                window.advance(by: 1)
                guard try skipWhitespace(), window.buffer[window.position] == UInt8(ascii: "[") else { throw failure("\"\(key)\" is not an array") }
                window.advance(by: 1)
                inArray = true
                return
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
            window.advance(by: 1)
        }
    }

    /// The end (exclusive) of the element starting at `window.position`.
    private mutating func elementEnd() throws(TraceReadError) -> Int {
        var depth = 0
        var inString = false
        var escaped = false
        var index = window.position
        while true {
            while index >= window.buffer.count {
                let offset = index - window.position
                guard try window.more() else { throw failure("unexpected end of file inside an element of \(key)") }
                index = window.position + offset
            }
            let byte = window.buffer[index]
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
            } else {
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { return index }  // the array's own end: a scalar element ends here
                    depth -= 1
                    if depth == 0 { return index + 1 }
                case UInt8(ascii: ","):
                    if depth == 0 { return index }
                default: break
                }
            }
            index += 1
        }
    }

    private mutating func skipWhitespace() throws(TraceReadError) -> Bool {
        while true {
            guard try window.ensure(1) else { return false }
            switch window.buffer[window.position] {
            case 0x20, 0x09, 0x0D, 0x0A: window.advance(by: 1)
            default: return true
            }
        }
    }

    private func failure(_ reason: String) -> TraceReadError {
        window.failure(reason)
    }
}

import Foundation
