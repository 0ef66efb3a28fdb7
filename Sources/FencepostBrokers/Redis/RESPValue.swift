import NIOCore

/// A Redis reply (RESP2): what a command answers.
package enum RESPValue: Sendable, Equatable {
    case simple(String)
    case error(String)
    case integer(Int64)
    /// nil: the null bulk string.
    case bulk([UInt8]?)
    /// nil: the null array.
    case array([RESPValue]?)
}

extension RESPValue {
    /// The largest bulk string or array read; past it the connection is given up.
    static let maximumLength = 64 << 20
    private static let maximumDepth = 16

    /// Reads one whole reply from `buffer`, consuming it; nil (nothing consumed) when the
    /// buffer does not hold all of it yet.
    static func read(from buffer: inout ByteBuffer) throws(BrokerError) -> RESPValue? {
        var copy = buffer
        guard let value = try read(&copy, depth: 0) else { return nil }
        buffer = copy
        return value
    }

    private static func read(_ buffer: inout ByteBuffer, depth: Int) throws(BrokerError) -> RESPValue? {
        guard depth < maximumDepth else { throw BrokerError("a Redis reply nests deeper than \(maximumDepth)") }
        guard let marker = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return nil }
        guard let line = readLine(&buffer) else { return nil }
        let text = String(decoding: line.dropFirst(), as: UTF8.self)
        switch marker {
        case UInt8(ascii: "+"): return .simple(text)
        case UInt8(ascii: "-"): return .error(text)
        case UInt8(ascii: ":"):
            guard let number = Int64(text) else { throw BrokerError("a Redis integer reply is not a number: \(text)") }
            return .integer(number)
        case UInt8(ascii: "$"):
            let length = try self.length(text)
            guard length >= 0 else { return .bulk(nil) }
            guard buffer.readableBytes >= length + 2, let bytes = buffer.readBytes(length: length) else { return nil }
            buffer.moveReaderIndex(forwardBy: 2)
            return .bulk(bytes)
        case UInt8(ascii: "*"):
            let count = try self.length(text)
            guard count >= 0 else { return .array(nil) }
            var items: [RESPValue] = []
            items.reserveCapacity(min(count, 1_024))
            for _ in 0..<count {
                guard let item = try read(&buffer, depth: depth + 1) else { return nil }
                items.append(item)
            }
            return .array(items)
        default:
            throw BrokerError("a Redis reply starts with an unknown byte \(marker)")
        }
    }

    /// The bytes up to CRLF (without it), consumed with it; nil when no CRLF yet.
    private static func readLine(_ buffer: inout ByteBuffer) -> [UInt8]? {
        let view = buffer.readableBytesView
        guard let end = view.firstIndex(of: UInt8(ascii: "\r")), view.index(after: end) < view.endIndex else {
            return nil
        }
        let line = Array(view[view.startIndex..<end])
        buffer.moveReaderIndex(forwardBy: line.count + 2)
        return line
    }

    private static func length(_ text: String) throws(BrokerError) -> Int {
        guard let length = Int(text), length >= -1, length <= maximumLength else {
            throw BrokerError("a Redis reply gives a length that is not one: \(text)")
        }
        return length
    }
}

/// Writes a command as RESP: an array of bulk strings.
enum RESPCommand {
    static func write(_ arguments: [[UInt8]], to buffer: inout ByteBuffer) {
        buffer.writeString("*\(arguments.count)\r\n")
        for argument in arguments {
            buffer.writeString("$\(argument.count)\r\n")
            buffer.writeBytes(argument)
            buffer.writeStaticString("\r\n")
        }
    }
}
