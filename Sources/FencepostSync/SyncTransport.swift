import AsyncHTTPClient
import FencepostCore
import FencepostStore
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// The two sync requests over AsyncHTTPClient, with every failure sorted into a ``SyncFailure``.
struct SyncTransport: Sendable {
    let endpoint: SyncEndpoint
    let client: HTTPClient
    /// Answers past this size are refused (a change page of 1,000 regions fits easily).
    private let maxAnswerBytes = 256 << 20

    /// Sends a batch; the backend's result for each key.
    func push(_ items: [OutboxItem]) async throws(SyncFailure) -> [String: SyncResult] {
        let body = SyncWire.mutationsBody(items.lazy.map(\.mutation))
        let answer = try await send(.POST, path: "/v1/sync/mutations", body: body)
        let results: [String: SyncResult]
        do {
            results = try SyncWire.parseResults(answer)
        } catch {
            throw .transient("the backend's answer is not a sync result: \(error)", retryAfter: nil)
        }
        let unanswered = items.count { results[$0.mutation.key] == nil }
        guard unanswered == 0 else {
            throw .transient("the backend left \(unanswered) of \(items.count) mutations unanswered", retryAfter: nil)
        }
        return results
    }

    /// One page of the backend's change feed.
    func changes(after cursor: Int64, entities: String, limit: Int) async throws(SyncFailure) -> (
        changes: [SyncChange], nextCursor: Int64, hasMore: Bool
    ) {
        let answer = try await send(
            .GET, path: "/v1/sync/changes?cursor=\(cursor)&limit=\(limit)&entity=\(entities)", body: nil)
        do {
            return try SyncWire.parseChanges(answer)
        } catch {
            throw .transient("the backend's answer is not a change page: \(error)", retryAfter: nil)
        }
    }

    private func send(_ method: HTTPMethod, path: String, body: String?) async throws(SyncFailure) -> JSONValue {
        var request = HTTPClientRequest(url: endpoint.baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(endpoint.token)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let status: Int
        let retryAfter: Double?
        let bytes: ByteBuffer
        do {
            let response = try await client.execute(request, timeout: .nanoseconds(endpoint.timeout.nanoseconds))
            status = Int(response.status.code)
            retryAfter = response.headers.first(name: "Retry-After").flatMap(Double.init)
            bytes = try await response.body.collect(upTo: maxAnswerBytes)
        } catch {
            throw Self.sort(error)
        }
        let text = String(buffer: bytes)
        switch status {
        case 200..<300:
            guard let answer = try? JSONParser.parse(Array(text.utf8)) else {
                throw .transient("the backend's answer is not JSON (HTTP \(status))", retryAfter: nil)
            }
            return answer
        case 408, 429, 500...:
            throw .transient("HTTP \(status): \(Self.reason(text))", retryAfter: retryAfter)
        default:
            throw .refused(status: status, Self.reason(text))
        }
    }

    /// The message of a JSON error body, else the body itself (shortened).
    private static func reason(_ text: String) -> String {
        if let message = (try? JSONParser.parse(Array(text.utf8)))?["error"]?["message"]?.stringValue { return message }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? "no reason given" : String(trimmed.prefix(300))
    }

    private static func sort(_ error: any Error) -> SyncFailure {
        if let error = error as? NIOConnectionError {
            // NIO's own description nests its parts' (unbalanced parentheses and all): say what
            // happened to the first address tried.
            let cause = error.connectionErrors.first.map { attempt in
                (attempt.error as? IOError).map { String(cString: strerror($0.errnoCode)).lowercased() }
                    ?? "\(attempt.error)"
            }
            return .unreachable("cannot connect to \(error.host):\(error.port)" + (cause.map { ": \($0)" } ?? ""))
        }
        if let error = error as? HTTPClientError, error == .connectTimeout { return .unreachable("connect timeout") }
        if let error = error as? IOError, [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH].contains(error.errnoCode) {
            return .unreachable(String(cString: strerror(error.errnoCode)).lowercased())
        }
        if let error = error as? HTTPClientError, error == .deadlineExceeded || error == .readTimeout {
            return .transient("timed out waiting for the backend", retryAfter: nil)
        }
        return .transient("\(error)", retryAfter: nil)
    }
}

extension Duration {
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
