package import FencepostCore
import Foundation

/// Streams the elements of arrays in a large JSON document, one parsed element at a time:
/// the `locations` of a Google Takeout Records.json, the `features` of a GeoJSON trace, the
/// `semanticSegments` and then the `rawSignals` of a Google Timeline export, or the elements of
/// a document that is itself an array. Only the element being read is in memory, so a
/// multi-gigabyte document reads in flat memory.
package struct JSONArrayStream {
    private var window: ChunkWindow
    /// The keys whose arrays are still to be read; empty for a document that is an array.
    private var remaining: [String]
    private let topLevel: Bool
    /// How the arrays are named in error messages.
    private let arrayName: String
    /// The nesting depth at `window.position` while seeking a key (1: in the top-level object).
    private var depth = 0
    private var inArray = false
    private var foundAny = false
    private var done = false

    /// The key of the array the last element came from (nil for a document that is an array).
    package private(set) var key: String?

    /// Streams the array under `key` in the top-level object.
    package init(source: ByteSource, key: String) {
        self.init(source: source, keys: [key])
    }

    /// Streams the arrays under any of `keys` in the top-level object, in the order the
    /// document has them; `key` tells which one an element came from. Refused when none is there.
    package init(source: ByteSource, keys: [String]) {
        precondition(!keys.isEmpty, "name at least one key")
        window = ChunkWindow(source: source)
        remaining = keys
        topLevel = false
        arrayName = keys.map { "\"\($0)\"" }.joined(separator: " or ")
    }

    /// Streams the elements of a document that is itself an array.
    package init(topLevelArrayOf source: ByteSource) {
        window = ChunkWindow(source: source)
        remaining = []
        topLevel = true
        arrayName = "top-level"
    }

    /// The line reached, for error messages.
    package var line: Int { window.line }

    /// The next element, or nil after the last one.
    package mutating func next() throws(TraceReadError) -> JSONValue? {
        while !done {
            if !inArray {
                guard try topLevel ? openTopLevelArray() : seekArray() else {
                    done = true
                    return nil
                }
            }
            guard try skipWhitespace() else { throw failure("unexpected end of file inside the \(arrayName) array") }
            if window.buffer[window.position] == UInt8(ascii: "]") {
                window.advance(by: 1)
                inArray = false
                if topLevel || remaining.isEmpty { done = true }
                continue
            }
            if window.buffer[window.position] == UInt8(ascii: ",") {
                window.advance(by: 1)
                guard try skipWhitespace() else {
                    throw failure("unexpected end of file inside the \(arrayName) array")
                }
            }
            let startLine = line
            let end = try elementEnd()
            let bytes = Array(window.buffer[window.position..<end])
            window.advance(to: end)
            do {
                return try JSONParser.parse(bytes)
            } catch {
                throw TraceReadError(
                    file: window.source.name, line: startLine + error.line - 1, reason: "invalid JSON: \(error.reason)")
            }
        }
        return nil
    }

    // MARK: - Scanning

    /// Moves past the `[` that opens a document that is an array (after any byte-order mark).
    private mutating func openTopLevelArray() throws(TraceReadError) -> Bool {
        if try window.ensure(3),
            window.buffer[window.position..<(window.position + 3)].elementsEqual([0xEF, 0xBB, 0xBF])
        {
            window.advance(by: 3)
        }
        guard try skipWhitespace(), window.buffer[window.position] == UInt8(ascii: "[") else {
            throw failure("expected a JSON array")
        }
        window.advance(by: 1)
        inArray = true
        return true
    }

    /// Moves past the next `"key": [` at depth 1 of the document whose key is still to be
    /// read; false when the document ends first, after at least one such array.
    private mutating func seekArray() throws(TraceReadError) -> Bool {
        var inString = false
        var escaped = false
        while try window.ensure(1) {
            let byte = window.buffer[window.position]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                window.advance(by: 1)
                continue
            }
            if byte == UInt8(ascii: "\""), depth == 1, let found = try wantedKey() {
                guard try skipWhitespace(), window.buffer[window.position] == UInt8(ascii: "[") else {
                    throw failure("\"\(found)\" is not an array")
                }
                window.advance(by: 1)
                remaining.removeAll { $0 == found }
                key = found
                foundAny = true
                inArray = true
                return true
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 {
                    window.advance(by: 1)
                    return try endOfDocument()
                }
            default: break
            }
            window.advance(by: 1)
        }
        return try endOfDocument()
    }

    private func endOfDocument() throws(TraceReadError) -> Bool {
        guard foundAny else { throw failure("no \(arrayName) array found") }
        return false
    }

    /// At a `"`: when the string there is a key still wanted followed by `:`, moves past the
    /// colon and returns the key; otherwise moves nothing.
    private mutating func wantedKey() throws(TraceReadError) -> String? {
        for key in remaining {
            let quoted = Array("\"\(key)\"".utf8)
            guard try window.ensure(quoted.count),
                window.buffer[window.position..<(window.position + quoted.count)].elementsEqual(quoted)
            else { continue }
            // A colon after it (past any whitespace) makes it a key rather than a value.
            var index = window.position + quoted.count
            while true {
                while index >= window.buffer.count {
                    let offset = index - window.position
                    guard try window.more() else { return nil }
                    index = window.position + offset
                }
                switch window.buffer[index] {
                case 0x20, 0x09, 0x0D, 0x0A: index += 1
                case UInt8(ascii: ":"):
                    window.advance(to: index + 1)
                    return key
                default: return nil
                }
            }
        }
        return nil
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
                guard try window.more() else {
                    throw failure("unexpected end of file inside an element of the \(arrayName) array")
                }
                index = window.position + offset
            }
            let byte = window.buffer[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
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
