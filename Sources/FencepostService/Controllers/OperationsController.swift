import FencepostStore
import Hummingbird
import NIOCore

/// `/healthz` (no token), `/metrics` (Prometheus text; a token only if configured) and
/// `/openapi.json` (no token: the API's OpenAPI 3.1 document, `HTTP/Assets/openapi.json`).
struct OperationsController {
    let auth: Authenticator
    let store: Store
    let metrics: ServiceMetrics
    let metricsRequireToken: Bool

    func addRoutes(to router: Router<FencepostRequestContext>) {
        router.get("/healthz", use: health)
        router.get("/openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: PackageResources.openapi_json)))
        }
        // Only when it asks for one is a token looked up: a scrape carrying a token to an
        // open /metrics costs no store read.
        if metricsRequireToken {
            router.authenticated(by: auth).get("/metrics", use: exposition)
        } else {
            router.get("/metrics", use: exposition)
        }
    }

    /// Cheap on any store: one trivial read proves the database answers.
    @Sendable func health(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        do {
            _ = try await store.regionsRevision()
        } catch {
            throw APIError(.serviceUnavailable, "store_unavailable", "the store cannot be read: \(error)")
        }
        return .json(#"{"status":"ok"}"#)
    }

    @Sendable func exposition(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        if metricsRequireToken { _ = try context.requireCaller() }
        let text = try await metrics.exposition(store: store)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
