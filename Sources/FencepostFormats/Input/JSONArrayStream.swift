public import FencepostCore

/// Streams the elements of one array in a large JSON document, one parsed element at a time:
/// the `locations` of a Google Takeout Records.json, the `features` of a GeoJSON trace.
/// Only the element being read is in memory, so a multi-gigabyte document reads in flat memory.
public struct JSONArrayStream {
    private let source: ByteSource
    private let key: String
    private var buffer: [UInt8] = []
    private var position = 0
    private var finished = false
    private var inArray = false
    private var done = false
    /// The line reached, for error messages.
    public private(set) var line = 1

    /// Streams the array under `key` in the top-level object.
    public init(source: ByteSource, key: String) {
        self.source = source
        self.key = key
    }

    /// The next element, or nil after the last one.
    public mutating func next() throws(TraceReadError) -> JSONValue? {
        if done { return nil }
        if !inArray { try seekArray() }
        guard try skipWhitespace() else { throw failure("unexpected end of file inside the \(key) array") }
        if buffer[position] == UInt8(ascii: "]") {
            done = true
            return nil
        }
        if buffer[position] == UInt8(ascii: ",") {
            advance(1)
            guard try skipWhitespace() else { throw failure("unexpected end of file inside the \(key) array") }
        }
        let startLine = line
        let end = try elementEnd()
        let bytes = Array(buffer[position..<end])
        advance(end - position)
        do {
            return try JSONParser.parse(bytes[...].withUnsafeBufferPointer { Data(buffer: $0) })
        } catch {
            throw TraceReadError(file: source.name, line: startLine + error.line - 1, reason: "invalid JSON: \(error.reason)")
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
            guard try ensure(pattern.count) else { throw failure("no \"\(key)\" array found") }
            let byte = buffer[position]
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                advance(1)
                continue
            }
            if byte == UInt8(ascii: "\""), depth == 1, buffer[position..<(position + pattern.count)].elementsEqual(pattern) {
                advance(pattern.count)
                guard try skipWhitespace(), buffer[position] == UInt8(ascii: ":") else { throw failure("expected ':' after \"\(key)\"") }
                advance(1)
                guard try skipWhitespace(), buffer[position] == UInt8(ascii: "[") else { throw failure("\"\(key)\" is not an array") }
                advance(1)
                inArray = true
                return
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
            advance(1)
        }
    }

    /// The end (exclusive) of the element starting at `position`.
    private mutating func elementEnd() throws(TraceReadError) -> Int {
        var depth = 0
        var inString = false
        var escaped = false
        var index = position
        while true {
            while index >= buffer.count {
                let offset = index - position
                guard try more() else { throw failure("unexpected end of file inside an element of \(key)") }
                index = position + offset
            }
            let byte = buffer[index]
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
            guard try ensure(1) else { return false }
            switch buffer[position] {
            case 0x20, 0x09, 0x0D, 0x0A: advance(1)
            default: return true
            }
        }
    }

    private mutating func ensure(_ count: Int) throws(TraceReadError) -> Bool {
        while buffer.count - position < count {
            guard try more() else { return false }
        }
        return true
    }

    private mutating func more() throws(TraceReadError) -> Bool {
        guard !finished else { return false }
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        guard let chunk = try source.read() else {
            finished = true
            return false
        }
        buffer.append(contentsOf: chunk)
        return true
    }

    private mutating func advance(_ count: Int) {
        for byte in buffer[position..<(position + count)] where byte == 0x0A { line += 1 }
        position += count
    }

    private func failure(_ reason: String) -> TraceReadError {
        TraceReadError(file: source.name, line: line, reason: reason)
    }
}

import Foundation
