package import NIOCore
import NIOPosix
import Synchronization

/// A message to publish and wait for the answer to: JetStream answers a publish with its ack.
package struct NATSRequest: Sendable {
    package var subject: String
    /// Header fields (`Nats-Msg-Id`), sent with `HPUB` when there are any.
    package var headers: [(name: String, value: String)]
    package var payload: [UInt8]

    package init(subject: String, headers: [(name: String, value: String)] = [], payload: [UInt8]) {
        self.subject = subject
        self.headers = headers
        self.payload = payload
    }
}

/// One connection to a NATS server, requests answered on a reply inbox of its own
/// (`_INBOX.<random>.<n>`, one subscription for all). A batch of requests goes out in one
/// write and their answers are awaited together. Used by one task at a time.
package final class NATSConnection: Sendable {
    private let channel: any Channel
    private let timeout: TimeAmount
    private let inbox: String
    private let nextReply = Mutex<UInt64>(0)

    private init(channel: any Channel, timeout: TimeAmount, inbox: String) {
        self.channel = channel
        self.timeout = timeout
        self.inbox = inbox
    }

    /// Connects (`CONNECT` with headers and no-responders on, the endpoint's user and
    /// password), subscribes to the reply inbox and waits until the server has taken both.
    package static func connect(to endpoint: BrokerEndpoint, timeout: TimeAmount) async throws -> NATSConnection {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(NATSDecoder()))
                    try channel.pipeline.syncOperations.addHandler(NATSClientHandler())
                }
            }
            .connect(host: endpoint.host, port: endpoint.port).get()
        let inbox = "_INBOX." + (0..<16).map { _ in String(Int.random(in: 0..<36), radix: 36) }.joined()
        let connection = NATSConnection(channel: channel, timeout: timeout, inbox: inbox)
        do {
            var options = [
                #""verbose":false"#, #""pedantic":false"#, #""headers":true"#, #""no_responders":true"#,
                #""lang":"swift""#, #""version":"fencepost""#, #""protocol":1"#,
            ]
            if let user = endpoint.user { options.append(#""user":\#(jsonString(user))"#) }
            if let password = endpoint.password { options.append(#""pass":\#(jsonString(password))"#) }
            var bytes = channel.allocator.buffer(capacity: 256)
            bytes.writeString("CONNECT {\(options.joined(separator: ","))}\r\nSUB \(inbox).* 1\r\n")
            let pong = channel.eventLoop.makePromise(of: Void.self)
            try await connection.awaiting(pong.futureResult) {
                channel.writeAndFlush(NATSOutbound.flushed(bytes, pong)).whenFailure { pong.fail($0) }
            }
        } catch {
            await connection.close()
            throw error
        }
        return connection
    }

    /// Publishes `requests` in one write, each with a reply subject of its own, and returns each
    /// one's answer (or why there is none) in order. A connection that ends or answers nothing
    /// within the timeout fails those still waiting.
    package func request(_ requests: [NATSRequest]) async throws -> [Result<NATSReply, any Error>] {
        guard !requests.isEmpty else { return [] }
        let first = nextReply.withLock { next in
            defer { next += UInt64(requests.count) }
            return next
        }
        var bytes = channel.allocator.buffer(capacity: requests.count * 512)
        var waits: [(replySubject: String, promise: EventLoopPromise<NATSReply>)] = []
        for (offset, request) in requests.enumerated() {
            let reply = "\(inbox).\(first + UInt64(offset))"
            Self.write(request, reply: reply, to: &bytes)
            waits.append((reply, channel.eventLoop.makePromise(of: NATSReply.self)))
        }
        let all = EventLoopFuture.whenAllComplete(waits.map(\.promise.futureResult), on: channel.eventLoop)
        let channel = self.channel
        let promises = waits.map(\.promise)
        return try await awaiting(all) {
            channel.writeAndFlush(NATSOutbound.requests(bytes, waits)).whenFailure { error in
                for promise in promises { promise.fail(error) }
            }
        }
    }

    /// Whether the connection is still open.
    package var isActive: Bool { channel.isActive }

    package func close() async {
        try? await channel.close()
    }

    /// Starts something and waits for `future`; past the timeout the connection is closed,
    /// which fails whatever still waits on it.
    private func awaiting<T: Sendable>(_ future: EventLoopFuture<T>, start: () -> Void) async throws -> T {
        let channel = self.channel
        let deadline = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        future.whenComplete { _ in deadline.cancel() }
        start()
        return try await future.get()
    }

    /// `PUB subject reply size` or `HPUB subject reply header-size total-size`, then the bytes.
    private static func write(_ request: NATSRequest, reply: String, to bytes: inout ByteBuffer) {
        if request.headers.isEmpty {
            bytes.writeString("PUB \(request.subject) \(reply) \(request.payload.count)\r\n")
        } else {
            var block = "NATS/1.0\r\n"
            for header in request.headers { block += "\(header.name): \(header.value)\r\n" }
            block += "\r\n"
            let headerSize = block.utf8.count
            bytes.writeString(
                "HPUB \(request.subject) \(reply) \(headerSize) \(headerSize + request.payload.count)\r\n")
            bytes.writeString(block)
        }
        bytes.writeBytes(request.payload)
        bytes.writeStaticString("\r\n")
    }
}

/// `text` as a JSON string literal.
func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where scalar.value < 0x20:
            out +=
                "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                + String(scalar.value, radix: 16)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
