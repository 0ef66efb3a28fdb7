import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// What the proxy does with one request.
package enum ProxyFault: Sendable, Equatable {
    /// Forward it and relay the answer.
    case pass
    /// Close the connection without forwarding (the backend never sees the request).
    case dropBeforeForwarding
    /// Answer with this status (and Retry-After seconds) without forwarding.
    case status(Int, retryAfter: Int? = nil)
    /// Wait this long, then forward (to outlast the client's timeout).
    case delay(seconds: Double)
    /// Forward it, let the backend apply it and answer, then close the connection without
    /// relaying the answer: the client cannot know its request was applied.
    case dropAfterForwarding
    /// Forward it, then send the answer's head and half its body and reset the connection
    /// (TCP RST): the backend applied it, the client reads a broken answer.
    case resetMidBody
}

/// An HTTP proxy on 127.0.0.1 between a sync client and its backend that injects faults:
/// each request takes the next fault from a script (then `pass`, or what a chooser picks), or
/// the standing fault while an outage is on. Real sockets and real requests on both sides; a
/// test helper, not a mock.
package final class FaultProxy: Sendable {
    package let port: Int
    private let faults = FaultScript()
    private let client: HTTPClient
    private let upstream: String
    private let server: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
    private let acceptor: Task<Void, Never>

    /// Starts a proxy in front of `upstream` (a base URL such as http://127.0.0.1:8080).
    package static func start(upstream: String) async throws -> FaultProxy {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        return FaultProxy(server: server, upstream: upstream)
    }

    private init(
        server: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>, upstream: String
    ) {
        self.server = server
        self.port = server.channel.localAddress?.port ?? 0
        self.upstream = upstream
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        self.client = client
        let faults = self.faults
        acceptor = Task {
            try? await server.executeThenClose { connections in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in connections {
                        group.addTask {
                            try? await Self.serve(connection, faults: faults, client: client, upstream: upstream)
                        }
                    }
                }
            }
        }
    }

    package var url: String { "http://127.0.0.1:\(port)" }

    /// The next requests get these faults, in order; after them, requests pass.
    package func script(_ faults: [ProxyFault]) {
        self.faults.state.withLock { $0.script.append(contentsOf: faults) }
    }

    /// Requests past the script get what `choose` picks (a random campaign), instead of `pass`.
    package func choose(_ choose: @escaping @Sendable () -> ProxyFault) {
        faults.state.withLock { $0.chooser = choose }
    }

    /// `observe` sees every answer the backend gave to a forwarded request (the request's URI
    /// and the answer's body), whether or not the client then got it.
    package func observeAnswers(_ observe: @escaping @Sendable (String, String) -> Void) {
        faults.state.withLock { $0.observer = observe }
    }

    /// Requests being handled now (a delayed one stays in flight after its client gave up).
    package var inFlight: Int {
        faults.state.withLock { $0.inFlight }
    }

    /// Every request gets `fault` until `endOutage()` (a backend that is down or failing).
    package func outage(_ fault: ProxyFault) {
        faults.state.withLock { $0.standing = fault }
    }

    package func endOutage() {
        faults.state.withLock { $0.standing = nil }
    }

    /// The fault each request so far got, in order.
    package var seen: [ProxyFault] {
        faults.state.withLock { $0.seen }
    }

    /// The body of each request so far, in the order they came (the order of ``seen``).
    package var bodies: [String] {
        faults.state.withLock { $0.bodies }
    }

    package func stop() async {
        server.channel.close(promise: nil)
        acceptor.cancel()
        _ = await acceptor.value
        try? await client.shutdown()
    }

    private static func serve(
        _ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>,
        faults: FaultScript, client: HTTPClient, upstream: String
    ) async throws {
        try await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            var body = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let requestHead):
                    head = requestHead
                    body.clear()
                case .body(let chunk):
                    body.writeImmutableBuffer(chunk)
                case .end:
                    guard let head else { return }
                    let fault = faults.next(body: String(buffer: body))
                    faults.state.withLock { $0.inFlight += 1 }
                    defer { faults.state.withLock { $0.inFlight -= 1 } }
                    switch fault {
                    case .dropBeforeForwarding:
                        return
                    case .status(let code, let retryAfter):
                        var headers = HTTPHeaders([("Content-Type", "application/json")])
                        if let retryAfter { headers.add(name: "Retry-After", value: String(retryAfter)) }
                        let text = #"{"error":{"code":"injected","message":"fault injected by the test proxy"}}"#
                        try await respond(
                            outbound, status: .init(statusCode: code), headers: headers, body: ByteBuffer(string: text))
                    case .pass, .delay, .dropAfterForwarding, .resetMidBody:
                        if case .delay(let seconds) = fault {
                            try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                        }
                        let (status, headers, answer) = try await forward(
                            head, body: body, client: client, upstream: upstream)
                        faults.state.withLock { $0.observer }?(head.uri, String(buffer: answer))
                        if fault == .dropAfterForwarding { return }
                        if fault == .resetMidBody {
                            try await respondHalf(
                                outbound, channel: connection.channel, status: status, headers: headers, body: answer)
                            return
                        }
                        try await respond(outbound, status: status, headers: headers, body: answer)
                    }
                }
            }
        }
    }

    private static func forward(
        _ head: HTTPRequestHead, body: ByteBuffer, client: HTTPClient, upstream: String
    ) async throws -> (HTTPResponseStatus, HTTPHeaders, ByteBuffer) {
        var request = HTTPClientRequest(url: upstream + head.uri)
        request.method = head.method
        for (name, value) in head.headers where !["host", "content-length", "connection"].contains(name.lowercased()) {
            request.headers.add(name: name, value: value)
        }
        request.body = .bytes(body)
        let response = try await client.execute(request, timeout: .seconds(60))
        let answer = try await response.body.collect(upTo: 256 << 20)
        var headers = HTTPHeaders()
        for (name, value) in response.headers
        where !["content-length", "connection", "transfer-encoding"].contains(name.lowercased()) {
            headers.add(name: name, value: value)
        }
        return (response.status, headers, answer)
    }

    private static func respond(
        _ outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, status: HTTPResponseStatus,
        headers: HTTPHeaders, body: ByteBuffer
    ) async throws {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)))
        try await outbound.write(.body(.byteBuffer(body)))
        try await outbound.write(.end(nil))
    }

    /// The head and half the body, then a reset: SO_LINGER 0 makes the close send RST.
    private static func respondHalf(
        _ outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, channel: any Channel,
        status: HTTPResponseStatus,
        headers: HTTPHeaders, body: ByteBuffer
    ) async throws {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)))
        try await outbound.write(
            .body(.byteBuffer(body.getSlice(at: body.readerIndex, length: body.readableBytes / 2) ?? ByteBuffer())))
        try await (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        try await channel.close()
    }
}

/// The faults still to inject, the standing one, and those injected so far.
private final class FaultScript: Sendable {
    struct State {
        var script: [ProxyFault] = []
        var standing: ProxyFault?
        var chooser: (@Sendable () -> ProxyFault)?
        var seen: [ProxyFault] = []
        var bodies: [String] = []
        var observer: (@Sendable (String, String) -> Void)?
        var inFlight = 0
    }

    let state = Mutex(State())

    func next(body: String) -> ProxyFault {
        state.withLock { state in
            let fault =
                state.standing
                ?? (state.script.isEmpty ? state.chooser?() ?? ProxyFault.pass : state.script.removeFirst())
            state.seen.append(fault)
            state.bodies.append(body)
            return fault
        }
    }
}
