import Logging
import NIOCore

/// Sends PINGREQ every `interval` and closes the connection when no PINGRESP comes within
/// `timeout`: a half-open connection (a broker gone without a FIN) is noticed within
/// `interval + timeout`. PINGRESP stops here; every other packet goes on.
final class MQTTKeepAliveHandler: ChannelDuplexHandler {
    typealias InboundIn = MQTTPacket
    typealias InboundOut = MQTTPacket
    typealias OutboundIn = MQTTPacket
    typealias OutboundOut = MQTTPacket

    private let interval: TimeAmount
    private let timeout: TimeAmount
    private let logger: Logger
    private var pinger: RepeatedTask?
    private var deadline: Scheduled<Void>?

    init(interval: Duration, timeout: Duration, logger: Logger) {
        self.interval = TimeAmount(interval)
        self.timeout = TimeAmount(timeout)
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .pingresp = unwrapInboundIn(data) {
            deadline?.cancel()
            deadline = nil
            return
        }
        context.fireChannelRead(data)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard pinger == nil else { return }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        pinger = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            bound.value.0.ping(bound.value.1)
        }
    }

    private func ping(_ context: ChannelHandlerContext) {
        guard deadline == nil else { return }  // the last ping's deadline still runs
        context.writeAndFlush(wrapOutboundOut(.pingreq), promise: nil)
        let seconds = Double(timeout.nanoseconds) / 1e9
        let logger = self.logger
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            logger.warning("MQTT: no PINGRESP within \(seconds) s; closing the connection to make it again")
            bound.value.fireErrorCaught(MQTTProtocolError("no PINGRESP within \(seconds) s"))
            bound.value.close(promise: nil)
        }
    }

    private func stop() {
        pinger?.cancel()
        pinger = nil
        deadline?.cancel()
        deadline = nil
    }
}
