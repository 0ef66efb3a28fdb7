import FencepostCore
import FencepostService
import FencepostStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore

/// An HTTP request to the service's router, in process (Hummingbird's own router test client,
/// the service's background writer running), on a store in memory. The first byte chooses the
/// route; the rest is the body, or the query string (or path end) of a GET. Whatever the
/// request, the answer is never a 5xx: a 500 would be an error the service did not expect.
enum RouterTarget {
    /// A route and how the rest of the input becomes its request.
    struct Route: Sendable {
        var method: HTTPRequest.Method
        var path: String
        /// The input goes in the query string (or, for a path ending in `/`, after it).
        var inURI = false
        var token: TokenKind = .admin
        var headers: HTTPFields = [:]
    }

    enum TokenKind: Sendable { case admin, device, reader, inQuery }

    static let routes: [Route] = [
        Route(method: .post, path: "/v1/devices/fuzz/locations"),
        Route(method: .post, path: "/v1/devices/fuzz/locations", token: .device),
        Route(
            method: .post, path: "/owntracks",
            headers: [HTTPField.Name("X-Limit-U")!: "fuzz", HTTPField.Name("X-Limit-D")!: "phone"]),
        Route(method: .get, path: "/osmand", inURI: true, token: .inQuery),
        Route(method: .post, path: "/osmand", headers: [.contentType: "application/x-www-form-urlencoded"]),
        Route(method: .post, path: "/v1/regions/plan"),
        Route(method: .post, path: "/v1/regions/apply"),
        Route(method: .put, path: "/v1/regions/fuzz-region"),
        Route(method: .delete, path: "/v1/regions/", inURI: true),
        Route(method: .get, path: "/v1/regions/", inURI: true),
        Route(method: .post, path: "/v1/sync/mutations"),
        Route(method: .get, path: "/v1/sync/changes", inURI: true),
        Route(method: .get, path: "/v1/events", inURI: true, token: .reader),
        Route(method: .get, path: "/v1/visits", inURI: true, token: .reader),
        Route(method: .get, path: "/v1/live/map.svg", inURI: true),
        Route(method: .get, path: "/v1/live/snapshot", inURI: true),
    ]

    private static let service = InProcessService()

    static func run(_ bytes: [UInt8]) async -> FuzzOutcome {
        guard let selector = bytes.first else { return .refused }
        let route = routes[Int(selector) % routes.count]
        let rest = Array(bytes.dropFirst())
        do {
            let answer = try await service.execute(route, rest)
            if answer.status.code >= 500 {
                violated("\(route.method) \(route.path) answered \(answer.status.code): \(String(buffer: answer.body))")
            }
            return answer.status.code < 300 ? .accepted(1) : .refused
        } catch {
            violated("\(route.method) \(route.path) did not answer: \(error)")
        }
    }

    /// Bytes as URI text: unreserved characters and the query's punctuation kept, the rest
    /// percent-encoded, so any input is a request the client can send.
    static func uriText(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            case _ where "-._~=&+,;:%".utf8.contains(byte):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                text += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return text
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// The service on a store in memory, answering requests through Hummingbird's router test
/// client in one long-lived test session (its services run beside it), started at the first
/// request and made again every few thousand so memory stays bounded.
actor InProcessService {
    private struct Job: Sendable {
        var method: HTTPRequest.Method
        var uri: String
        var headers: HTTPFields
        var body: ByteBuffer?
        var reply: CheckedContinuation<TestResponse, any Error>
    }

    private struct Session {
        var jobs: AsyncStream<Job>.Continuation
        var tokens: [RouterTarget.TokenKind: String]
        var finished: Task<Void, Never>
    }

    private var session: Session?
    private var requests = 0
    private static let requestsPerSession = 5_000

    func execute(_ route: RouterTarget.Route, _ rest: [UInt8]) async throws -> TestResponse {
        requests += 1
        if requests % Self.requestsPerSession == 0, let old = session {
            old.jobs.finish()
            await old.finished.value
            session = nil
        }
        let session = try await current()
        var headers = route.headers
        var uri = route.path
        if route.inURI {
            let text = RouterTarget.uriText(rest)
            uri += route.path.hasSuffix("/") ? (text.isEmpty ? "x" : text) : "?" + text
        }
        switch route.token {
        case .inQuery: uri += (uri.contains("?") ? "&" : "?") + "token=" + session.tokens[.admin]!
        case let kind: headers[.authorization] = "Bearer " + session.tokens[kind]!
        }
        let body = route.inURI ? nil : ByteBuffer(bytes: rest)
        let method = route.method
        let jobs = session.jobs
        return try await withCheckedThrowingContinuation { reply in
            jobs.yield(Job(method: method, uri: uri, headers: headers, body: body, reply: reply))
        }
    }

    private func current() async throws -> Session {
        if let session { return session }
        let store = try Store.inMemory()
        try await store.applyRegions(IngestTarget.regions)
        let tokens: [RouterTarget.TokenKind: String] = [
            .admin: try await store.createToken(name: "admin", scope: .admin),
            .device: try await store.createToken(name: "device", scope: .device("fuzz")),
            .reader: try await store.createToken(name: "reader", scope: .read),
        ]
        var logger = Logger(label: "fuzz")
        logger.logLevel = .critical
        let app = try await buildApplication(store: store, settings: ServiceSettings(), logger: logger)
        let (stream, jobs) = AsyncStream<Job>.makeStream()
        let finished = Task {
            do {
                try await app.test(.router) { client in
                    for await job in stream {
                        do {
                            job.reply.resume(
                                returning: try await client.execute(
                                    uri: job.uri, method: job.method, headers: job.headers, body: job.body))
                        } catch {
                            job.reply.resume(throwing: error)
                        }
                    }
                }
            } catch {
                violated("the in-process service stopped: \(error)")
            }
            await store.close()
        }
        let session = Session(jobs: jobs, tokens: tokens, finished: finished)
        self.session = session
        return session
    }
}
