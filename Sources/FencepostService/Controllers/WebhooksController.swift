import FencepostCore
import FencepostStore
import Hummingbird

/// `GET /v1/webhooks/dead-letters` (admin): events the webhooks refused or gave up on.
struct WebhooksController {
    let auth: Authenticator
    let store: Store

    func addRoutes(to router: Router<FencepostRequestContext>) {
        router.authenticated(by: auth).get("/v1/webhooks/dead-letters", use: deadLetters)
    }

    @Sendable func deadLetters(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        _ = try context.requireAdmin()
        let letters = try await store.webhookDeadLetters().map(DeadLetterJSON.init)
        return .json(try JSONValueEncoder.canonicalText(["dead_letters": letters]))
    }
}

/// A webhook delivery that gave up, as `GET /v1/webhooks/dead-letters` lists it.
private struct DeadLetterJSON: Encodable {
    var id: Int64
    var webhook: String
    var eventID: String
    var attempts: Int
    var lastError: String
    var createdAt: String

    enum CodingKeys: String, CodingKey {
        case id, webhook
        case eventID = "event_id"
        case attempts
        case lastError = "last_error"
        case createdAt = "created_at"
    }

    init(_ letter: WebhookDeadLetter) {
        id = letter.id
        webhook = letter.webhook
        eventID = letter.eventID
        attempts = letter.attempts
        lastError = letter.lastError
        createdAt = letter.createdAt
    }
}
