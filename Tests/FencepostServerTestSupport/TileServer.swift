import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A map tile server on 127.0.0.1 for the live page's `map_tiles`: answers every GET with a
/// one-pixel PNG of a pale green and remembers the paths asked for, so a test can see which
/// tiles the page wanted. Real sockets, as a browser sees a tile server.
package final class TileServer: Sendable {
    package let port: Int
    private let server: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
    private let acceptor: Task<Void, Never>
    private let requested = RequestLog()
    private static let tile = Data(
        base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGO4+eoyAAU2Apc3uPKLAAAAAElFTkSuQmCC")!

    package static func start() async throws -> TileServer {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        return TileServer(server: server)
    }

    private init(server: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>) {
        self.server = server
        self.port = server.channel.localAddress?.port ?? 0
        let requested = self.requested
        acceptor = Task {
            try? await server.executeThenClose { connections in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in connections {
                        group.addTask { try? await Self.serve(connection, requested: requested) }
                    }
                }
            }
        }
    }

    /// `http://127.0.0.1:PORT/{z}/{x}/{y}.png`
    package var template: String { "http://127.0.0.1:\(port)/{z}/{x}/{y}.png" }

    /// The paths asked for so far, in order.
    package var paths: [String] { requested.paths.withLock { $0 } }

    package func stop() async {
        server.channel.close(promise: nil)
        acceptor.cancel()
        _ = await acceptor.value
    }

    private static func serve(
        _ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, requested: RequestLog
    ) async throws {
        try await connection.executeThenClose { inbound, outbound in
            var uri: String?
            for try await part in inbound {
                switch part {
                case .head(let head): uri = head.uri
                case .body: continue
                case .end:
                    if let uri { requested.paths.withLock { $0.append(uri) } }
                    let headers = HTTPHeaders([("Content-Type", "image/png"), ("Content-Length", String(tile.count))])
                    try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)))
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: Array(tile)))))
                    try await outbound.write(.end(nil))
                }
            }
        }
    }
}

/// The paths a tile server was asked for.
private final class RequestLog: Sendable {
    let paths = Mutex<[String]>([])
}
