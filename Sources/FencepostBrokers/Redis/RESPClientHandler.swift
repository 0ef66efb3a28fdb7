import NIOCore

/// Commands sent back to back and the promise of their replies, in order.
struct RESPPipeline: Sendable {
    var bytes: ByteBuffer
    var count: Int
    var promise: EventLoopPromise<[RESPValue]>
}

/// Frames inbound bytes into replies.
struct RESPDecoder: ByteToMessageDecoder {
    typealias InboundOut = RESPValue

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let value = try RESPValue.read(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(value))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

/// Pairs replies with the pipelines that asked for them (Redis answers in order); when the
/// connection ends, every pipeline still waiting fails.
final class RESPClientHandler: ChannelDuplexHandler {
    typealias InboundIn = RESPValue
    typealias OutboundIn = RESPPipeline
    typealias OutboundOut = ByteBuffer

    private var waiting = CircularBuffer<(count: Int, replies: [RESPValue], promise: EventLoopPromise<[RESPValue]>)>()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let pipeline = unwrapOutboundIn(data)
        waiting.append((pipeline.count, [], pipeline.promise))
        context.write(wrapOutboundOut(pipeline.bytes), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let reply = unwrapInboundIn(data)
        guard !waiting.isEmpty else {
            context.fireErrorCaught(BrokerError("Redis sent a reply nothing asked for"))
            return
        }
        waiting[waiting.startIndex].replies.append(reply)
        if waiting[waiting.startIndex].replies.count == waiting[waiting.startIndex].count {
            let done = waiting.removeFirst()
            done.promise.succeed(done.replies)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failAll(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(BrokerError("the connection to Redis closed"))
        context.fireChannelInactive()
    }

    private func failAll(_ error: any Error) {
        while let pending = waiting.popFirst() { pending.promise.fail(error) }
    }
}
