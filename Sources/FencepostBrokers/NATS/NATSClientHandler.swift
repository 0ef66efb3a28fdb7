import NIOCore

/// A reply a request got: its header block (`NATS/1.0 [status]` and fields) and its payload.
package struct NATSReply: Sendable, Equatable {
    package var headers: [UInt8]
    package var payload: [UInt8]

    /// The status in the header block's first line (`NATS/1.0 503` is "no responders"); nil
    /// when it has none.
    package var status: Int? {
        let firstLine = headers.prefix { $0 != UInt8(ascii: "\r") }
        let parts = String(decoding: firstLine, as: UTF8.self).split(separator: " ")
        return parts.count >= 2 ? Int(parts[1]) : nil
    }
}

/// What the connection asks the handler to write.
enum NATSOutbound: Sendable {
    /// Bytes then `PING`; the promise is kept at the `PONG` (the server has processed them).
    case flushed(ByteBuffer, EventLoopPromise<Void>)
    /// Requests: the bytes publish them, each with a reply subject whose answer keeps a promise.
    case requests(ByteBuffer, [(replySubject: String, promise: EventLoopPromise<NATSReply>)])
}

/// Answers the server's `PING`s, pairs `PONG`s with the waits for them (in order) and replies
/// with their requests (by reply subject); a `-ERR` or the connection's end fails them all.
final class NATSClientHandler: ChannelDuplexHandler {
    typealias InboundIn = NATSServerMessage
    typealias OutboundIn = NATSOutbound
    typealias OutboundOut = ByteBuffer

    private var pongs = CircularBuffer<EventLoopPromise<Void>>()
    private var replies: [String: EventLoopPromise<NATSReply>] = [:]

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .flushed(var bytes, let pong):
            pongs.append(pong)
            bytes.writeStaticString("PING\r\n")
            context.write(wrapOutboundOut(bytes), promise: promise)
        case .requests(let bytes, let requests):
            for request in requests { replies[request.replySubject] = request.promise }
            context.write(wrapOutboundOut(bytes), promise: promise)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .ping:
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "PONG\r\n")), promise: nil)
        case .pong:
            pongs.popFirst()?.succeed()
        case .message(let subject, let headers, let payload):
            replies.removeValue(forKey: subject)?.succeed(NATSReply(headers: headers, payload: payload))
        case .error(let message):
            failAll(BrokerError("the NATS server said: \(message)"))
            context.close(promise: nil)
        case .info, .ok:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failAll(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(BrokerError("the connection to the NATS server closed"))
        context.fireChannelInactive()
    }

    private func failAll(_ error: any Error) {
        while let pong = pongs.popFirst() { pong.fail(error) }
        let waiting = replies
        replies = [:]
        for promise in waiting.values { promise.fail(error) }
    }
}
