import NIOCore

/// What a NATS server sends a client (the protocol's server operations).
enum NATSServerMessage: Sendable, Equatable {
    case info(String)
    /// `MSG` or, with headers, `HMSG`: a message on a subscribed subject.
    case message(subject: String, headers: [UInt8], payload: [UInt8])
    case ping
    case pong
    case ok
    case error(String)
}

extension NATSServerMessage {
    /// The largest message read; past it the connection is given up.
    static let maximumSize = 64 << 20

    /// Reads one whole operation from `buffer`, consuming it; nil (nothing consumed) when the
    /// buffer does not hold all of it yet.
    static func read(from buffer: inout ByteBuffer) throws(BrokerError) -> NATSServerMessage? {
        let view = buffer.readableBytesView
        guard let cr = view.firstIndex(of: UInt8(ascii: "\r")), view.index(after: cr) < view.endIndex else {
            guard view.count <= 1 << 20 else { throw BrokerError("a NATS protocol line is longer than 1 MiB") }
            return nil
        }
        let line = String(decoding: view[view.startIndex..<cr], as: UTF8.self)
        let lineLength = view.distance(from: view.startIndex, to: cr) + 2
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard let operation = fields.first?.uppercased() else {
            buffer.moveReaderIndex(forwardBy: lineLength)
            return .ok  // an empty line: nothing to act on
        }
        switch operation {
        case "MSG", "HMSG":
            let headered = operation == "HMSG"
            // MSG subject sid [reply] size; HMSG subject sid [reply] header-size total-size
            let counts = fields.count - (headered ? 5 : 4)
            guard counts == 0 || counts == 1,
                let total = Int(fields[fields.count - 1]), total >= 0, total <= maximumSize
            else { throw BrokerError("a NATS \(operation) line is not one: \(line)") }
            var headerSize = 0
            if headered {
                guard let size = Int(fields[fields.count - 2]), size >= 0, size <= total else {
                    throw BrokerError("a NATS HMSG line is not one: \(line)")
                }
                headerSize = size
            }
            guard buffer.readableBytes >= lineLength + total + 2 else { return nil }
            buffer.moveReaderIndex(forwardBy: lineLength)
            guard let headers = buffer.readBytes(length: headerSize),
                let payload = buffer.readBytes(length: total - headerSize)
            else { return nil }
            buffer.moveReaderIndex(forwardBy: 2)
            return .message(subject: String(fields[1]), headers: headers, payload: payload)
        default:
            buffer.moveReaderIndex(forwardBy: lineLength)
            let rest = line.drop { $0 != " " }.drop { $0 == " " }
            switch operation {
            case "INFO": return .info(String(rest))
            case "PING": return .ping
            case "PONG": return .pong
            case "+OK": return .ok
            case "-ERR":
                var text = rest
                while text.first == "'" { text = text.dropFirst() }
                while text.last == "'" { text = text.dropLast() }
                return .error(String(text))
            default: throw BrokerError("an unknown NATS operation: \(line.prefix(80))")
            }
        }
    }
}

/// Frames inbound bytes into server operations.
struct NATSDecoder: ByteToMessageDecoder {
    typealias InboundOut = NATSServerMessage

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let message = try NATSServerMessage.read(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(message))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}
