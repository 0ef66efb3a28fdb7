package import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// An MQTT 3.1.1 client that gives the acknowledgement to the application: a QoS 1 message is
/// PUBACKed only when ``acknowledge(_:)`` is called for it (after the application committed
/// it), so a process killed in between loses nothing — the broker, with a persistent session,
/// delivers it again. libmosquitto acknowledges before its callback runs, which is why this
/// exists.
///
/// ``run(onMessage:onEvent:)`` connects, subscribes, delivers and reconnects with backoff until
/// cancelled. At most ``MQTTConfiguration/receiveMaximum`` messages are delivered and not yet
/// acknowledged: past that the client stops reading the socket (TCP pushes back on the broker).
package final class MQTTClient: Sendable {
    package let configuration: MQTTConfiguration
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var connection: Connection?
        var generation: UInt64 = 0
        /// The last connection the broker accepted.
        var acceptedGeneration: UInt64 = 0
        var lastPacketID: UInt16 = 0
        var publishes: [UInt16: CheckedContinuation<Void, any Error>] = [:]
    }

    /// The live connection: where packets are written and its window of unacknowledged messages.
    private struct Connection {
        var generation: UInt64
        var outbound: NIOAsyncChannelOutboundWriter<MQTTPacket>
        var inFlight = 0
        var windowWaiter: CheckedContinuation<Void, Never>?
    }

    package init(configuration: MQTTConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Messages delivered and not yet acknowledged on the current connection.
    package var inFlight: Int { state.withLock { $0.connection?.inFlight ?? 0 } }

    /// Connects, subscribes and hands each message to `onMessage` (in the order received;
    /// it should queue the message and return), reconnecting with backoff, until cancelled.
    package func run(
        onMessage: @escaping @Sendable (MQTTMessage) async -> Void,
        onEvent: @escaping @Sendable (MQTTConnectionEvent) -> Void = { _ in }
    ) async {
        var failures = 0
        while !Task.isCancelled {
            let (connected, reason) = await connectOnce(onMessage: onMessage, onEvent: onEvent)
            if Task.isCancelled { break }
            onEvent(.disconnected(reason: reason))
            failures = connected ? 0 : failures + 1
            let delay = backoff(failures: failures)
            logger.warning(
                "MQTT connection \(connected ? "lost" : "failed"); trying again",
                metadata: [
                    "broker": "\(configuration.host):\(configuration.port)", "reason": "\(reason)",
                    "retry_in": "\(delay)",
                ])
            try? await Task.sleep(for: delay)
        }
    }

    /// Sends the PUBACK of a QoS 1 message (nothing for QoS 0), in the order the application
    /// calls it; the protocol wants the order of receipt. A message of a connection that has
    /// since ended is not acknowledged: the broker sends it again.
    package func acknowledge(_ message: MQTTMessage) async {
        guard let packetID = message.publish.packetID else { return }
        let outbound = state.withLock { state -> NIOAsyncChannelOutboundWriter<MQTTPacket>? in
            guard var connection = state.connection, connection.generation == message.connection else { return nil }
            connection.inFlight -= 1
            connection.windowWaiter?.resume()
            connection.windowWaiter = nil
            state.connection = connection
            return connection.outbound
        }
        try? await outbound?.write(.puback(packetID: packetID))
    }

    /// Publishes with QoS 1 and returns once the broker acknowledged it. Throws
    /// ``MQTTPublishError`` when not connected or when the connection ends first (the caller
    /// decides whether to send it again).
    ///
    /// The PUBACK comes in the same stream as the messages the client receives, which is not
    /// read while `receiveMaximum` of them wait for ``acknowledge(_:)``: code that acknowledges
    /// this client's messages must not wait for a publish of its own in between (it would wait
    /// for ever with the window full); it publishes from another task.
    package func publish(topic: String, payload: [UInt8], retain: Bool = false) async throws {
        precondition(topic.utf8.count <= Int(UInt16.max), "an MQTT topic is at most 65,535 bytes")
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let target = state.withLock { state -> (NIOAsyncChannelOutboundWriter<MQTTPacket>, UInt16)? in
                guard let connection = state.connection else { return nil }
                var id = state.lastPacketID
                repeat { id = id == .max ? 1 : id + 1 } while state.publishes[id] != nil
                state.lastPacketID = id
                state.publishes[id] = continuation
                return (connection.outbound, id)
            }
            guard let (outbound, id) = target else {
                continuation.resume(throwing: MQTTPublishError.notConnected)
                return
            }
            let packet = MQTTPacket.publish(
                MQTTPublish(topic: topic, payload: payload, qos: .atLeastOnce, packetID: id, retain: retain))
            Task {
                do {
                    try await outbound.write(packet)
                } catch {
                    state.withLock { $0.publishes.removeValue(forKey: id) }?.resume(
                        throwing: MQTTPublishError.connectionLost)
                }
            }
        }
    }

    // MARK: - One connection

    /// One connection from connect to its end: whether it got as far as CONNACK, and why it ended.
    private func connectOnce(
        onMessage: @escaping @Sendable (MQTTMessage) async -> Void,
        onEvent: @escaping @Sendable (MQTTConnectionEvent) -> Void
    ) async -> (connected: Bool, reason: String) {
        var generation: UInt64 = 0
        func accepted() -> Bool { state.withLock { generation != 0 && $0.acceptedGeneration == generation } }
        do {
            let channel = try await makeChannel()
            generation = state.withLock { state in
                state.generation += 1
                return state.generation
            }
            let current = generation
            try await withTaskCancellationHandler {
                try await channel.executeThenClose { inbound, outbound in
                    defer { connectionEnded(current) }
                    try await converse(
                        generation: current, inbound: inbound, outbound: outbound, onMessage: onMessage,
                        onEvent: onEvent)
                }
            } onCancel: {
                channel.channel.close(promise: nil)
                connectionEnded(current)
            }
            return (accepted(), "the broker closed the connection")
        } catch {
            return (accepted(), "\(error)")
        }
    }

    private func converse(
        generation: UInt64, inbound: NIOAsyncChannelInboundStream<MQTTPacket>,
        outbound: NIOAsyncChannelOutboundWriter<MQTTPacket>,
        onMessage: @Sendable (MQTTMessage) async -> Void, onEvent: (MQTTConnectionEvent) -> Void
    ) async throws {
        let keepAlive = UInt16(clamping: configuration.keepAlive.components.seconds)
        try await outbound.write(
            .connect(
                MQTTConnect(
                    clientID: configuration.clientID, username: configuration.username,
                    password: configuration.password, cleanSession: configuration.cleanSession,
                    keepAliveSeconds: max(1, keepAlive))))
        var packets = inbound.makeAsyncIterator()
        guard let first = try await packets.next() else {
            throw MQTTProtocolError("the broker closed the connection before CONNACK")
        }
        guard case .connack(let sessionPresent, let code) = first else {
            throw MQTTProtocolError("the broker answered CONNECT with \(first.kind), not CONNACK")
        }
        guard code == 0 else { throw MQTTProtocolError("the broker refused the connection: \(Self.refusal(code))") }
        state.withLock { state in
            state.connection = Connection(generation: generation, outbound: outbound)
            state.acceptedGeneration = generation
        }
        let subscribeID: UInt16 = 1
        if !configuration.subscriptions.isEmpty {
            try await outbound.write(.subscribe(packetID: subscribeID, filters: configuration.subscriptions))
        } else {
            onEvent(.connected(sessionPresent: sessionPresent))
        }
        while let packet = try await packets.next() {
            switch packet {
            case .publish(let publish):
                let message = MQTTMessage(publish: publish, connection: generation)
                if publish.qos == .atLeastOnce {
                    state.withLock { $0.connection?.inFlight += 1 }
                }
                await onMessage(message)
                await waitForWindow(generation)
            case .puback(let packetID):
                state.withLock { $0.publishes.removeValue(forKey: packetID) }?.resume()
            case .suback(let packetID, let codes) where packetID == subscribeID:
                for (subscription, code) in zip(configuration.subscriptions, codes) where code == 0x80 {
                    throw MQTTProtocolError("the broker refused the subscription to \(subscription.filter)")
                }
                logger.info(
                    "MQTT connected and subscribed",
                    metadata: [
                        "broker": "\(configuration.host):\(configuration.port)",
                        "session_present": "\(sessionPresent)",
                        "topics": "\(configuration.subscriptions.map(\.filter).joined(separator: " "))",
                    ])
                onEvent(.connected(sessionPresent: sessionPresent))
            default:
                throw MQTTProtocolError("unexpected \(packet.kind) from the broker")
            }
        }
    }

    /// Returns once fewer than `receiveMaximum` messages wait for their acknowledgement.
    private func waitForWindow(_ generation: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { state -> Bool in
                guard var connection = state.connection, connection.generation == generation,
                    connection.inFlight >= configuration.receiveMaximum
                else { return false }
                connection.windowWaiter = continuation
                state.connection = connection
                return true
            }
            if !wait { continuation.resume() }
        }
    }

    /// Forgets the connection: publishes waiting for their PUBACK fail, a reader waiting for
    /// the window goes on (and finds the stream ended).
    private func connectionEnded(_ generation: UInt64) {
        let (publishes, waiter) = state.withLock { state in
            guard let connection = state.connection, connection.generation == generation else {
                return ([CheckedContinuation<Void, any Error>](), CheckedContinuation<Void, Never>?.none)
            }
            state.connection = nil
            defer { state.publishes = [:] }
            return (Array(state.publishes.values), connection.windowWaiter)
        }
        waiter?.resume()
        for publish in publishes { publish.resume(throwing: MQTTPublishError.connectionLost) }
    }

    private func makeChannel() async throws -> NIOAsyncChannel<MQTTPacket, MQTTPacket> {
        let configuration = self.configuration
        let logger = self.logger
        let tlsContext = configuration.tls ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
        return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tlsContext {
                        try pipeline.addHandler(
                            try NIOSSLClientHandler(context: tlsContext, serverHostname: configuration.host))
                    }
                    try pipeline.addHandler(
                        ByteToMessageHandler(MQTTPacketDecoder(maximumSize: configuration.maximumPacketSize)))
                    try pipeline.addHandler(MessageToByteHandler(MQTTPacketEncoder()))
                    try pipeline.addHandler(
                        MQTTKeepAliveHandler(
                            interval: configuration.keepAlive, timeout: configuration.pingTimeout, logger: logger))
                    return try NIOAsyncChannel<MQTTPacket, MQTTPacket>(
                        wrappingChannelSynchronously: channel,
                        configuration: .init(backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8)))
                }
            }
    }

    /// The wait before the next attempt after `failures` failed ones in a row.
    private func backoff(failures: Int) -> Duration {
        let first = configuration.reconnectFirst
        let doubled = first * (1 << min(failures, 16))
        let capped = min(doubled, configuration.reconnectCap)
        return capped * Double.random(in: 0.5...1)
    }

    /// CONNACK's refusal codes (section 3.2.2.3).
    static func refusal(_ code: UInt8) -> String {
        switch code {
        case 1: "unacceptable protocol version"
        case 2: "client identifier rejected"
        case 3: "server unavailable"
        case 4: "bad user name or password"
        case 5: "not authorized"
        default: "return code \(code)"
        }
    }
}
