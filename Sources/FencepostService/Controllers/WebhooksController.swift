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
        let letters: [JSONValue] = try await store.webhookDeadLetters().map { letter in
            .object([
                "id": .number(Double(letter.id)), "webhook": .string(letter.webhook), "event_id": .string(letter.eventID),
                "attempts": .number(Double(letter.attempts)), "last_error": .string(letter.lastError),
                "created_at": .string(letter.createdAt),
            ])
        }
        return .json(JSONValue.object(["dead_letters": .array(letters)]).canonicalText())
    }
}
