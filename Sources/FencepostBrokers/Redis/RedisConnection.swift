package import NIOCore
import NIOPosix

/// One connection to a Redis server that sends commands pipelined: a batch goes out in one
/// write and its replies come back in order. Used by one task at a time.
package final class RedisConnection: Sendable {
    private let channel: any Channel
    private let timeout: TimeAmount

    private init(channel: any Channel, timeout: TimeAmount) {
        self.channel = channel
        self.timeout = timeout
    }

    /// Connects, then authenticates (`AUTH`) and picks the database (`SELECT`) as the endpoint
    /// says. A command that takes longer than `timeout` closes the connection.
    package static func connect(to endpoint: BrokerEndpoint, timeout: TimeAmount) async throws -> RedisConnection {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(RESPDecoder()))
                    try channel.pipeline.syncOperations.addHandler(RESPClientHandler())
                }
            }
            .connect(host: endpoint.host, port: endpoint.port).get()
        let connection = RedisConnection(channel: channel, timeout: timeout)
        do {
            var setup: [[String]] = []
            if let password = endpoint.password {
                setup.append(["AUTH"] + (endpoint.user.map { [$0] } ?? []) + [password])
            }
            if !endpoint.path.isEmpty { setup.append(["SELECT", endpoint.path]) }
            if !setup.isEmpty {
                for reply in try await connection.send(setup.map { $0.map { Array($0.utf8) } }) {
                    if case .error(let message) = reply {
                        throw BrokerError("Redis refused the connection: \(message)")
                    }
                }
            }
        } catch {
            await connection.close()
            throw error
        }
        return connection
    }

    /// Sends `commands` (each its arguments) in one write and returns their replies in order.
    /// Throws when the connection ends first or the replies take longer than the timeout.
    package func send(_ commands: [[[UInt8]]]) async throws -> [RESPValue] {
        guard !commands.isEmpty else { return [] }
        var bytes = channel.allocator.buffer(capacity: commands.count * 256)
        for command in commands { RESPCommand.write(command, to: &bytes) }
        let promise = channel.eventLoop.makePromise(of: [RESPValue].self)
        let channel = self.channel
        let deadline = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        promise.futureResult.whenComplete { _ in deadline.cancel() }
        channel.writeAndFlush(RESPPipeline(bytes: bytes, count: commands.count, promise: promise)).whenFailure {
            promise.fail($0)
        }
        return try await promise.futureResult.get()
    }

    /// Whether the connection is still open.
    package var isActive: Bool { channel.isActive }

    package func close() async {
        try? await channel.close()
    }
}
