import FencepostCore
import FencepostStore
import Foundation
import Hummingbird

/// `GET /v1/sinks` (admin): each sink's delivery as this instance sees it (its state, what it
/// delivered and what failed since it started) and as the store has it (cursor, lag, dead
/// letters), in configuration order.
struct SinksController {
    let auth: Authenticator
    let store: Store
    let board: SinkBoard

    func addRoutes(to router: Router<FencepostRequestContext>) {
        router.authenticated(by: auth).get("/v1/sinks", use: list)
    }

    @Sendable func list(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        _ = try context.requireAdmin()
        let now = Date()
        var sinks: [SinkJSON] = []
        for status in board.all {
            let position = try await store.deliveryPosition(status.cursorKey)
            sinks.append(
                SinkJSON(
                    name: status.name, type: status.type, state: status.state.rawValue, cursor: position?.cursor,
                    lagRows: position?.backlog.rows ?? 0,
                    lagSeconds: position.map { ($0.backlog.lagSeconds(at: now) * 1_000).rounded() / 1_000 } ?? 0,
                    delivered: status.delivered, failures: status.failures,
                    deadLetters: try await store.deadLetterCount(status.cursorKey), lastError: status.lastError,
                    lastErrorAt: status.lastErrorAt.map(Timestamp.format)))
        }
        return .json(try JSONValueEncoder.canonicalText(["sinks": sinks]))
    }
}

/// One sink as `GET /v1/sinks` shows it.
private struct SinkJSON: Encodable {
    var name: String
    var type: String
    var state: String
    var cursor: Int64?
    var lagRows: Int
    var lagSeconds: Double
    var delivered: Int
    var failures: Int
    var deadLetters: Int
    var lastError: String?
    var lastErrorAt: String?

    enum CodingKeys: String, CodingKey {
        case name, type, state, cursor
        case lagRows = "lag_rows"
        case lagSeconds = "lag_seconds"
        case delivered, failures
        case deadLetters = "dead_letters"
        case lastError = "last_error"
        case lastErrorAt = "last_error_at"
    }
}
