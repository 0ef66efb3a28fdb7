import AsyncHTTPClient
import Crypto
import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// Delivers every new event to each configured webhook, in outbox order, through the store:
/// the webhook's cursor advances only after a 2xx, so a crash or restart re-sends at most the
/// event in flight (receivers deduplicate by `X-Fencepost-Event-ID`). Transient failures
/// (connection errors, timeouts, 5xx, 408, 429) retry with backoff (1 s, 3 s, then
/// doubling with jitter to a cap); a 4xx or the last allowed attempt dead-letters the event.
struct WebhookDeliveryJob: Service {
    let store: Store
    let webhooks: [ServiceConfiguration.Webhook]
    let maxAttempts: Int
    let signal: ChangeSignal
    let pollInterval: Duration
    let logger: Logger
    var timeout: TimeAmount = .seconds(10)
    private static let retries = RetrySchedule(quick: [1, 3])

    func run() async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                for webhook in webhooks {
                    group.addTask { await deliverWhileHolding(webhook, client: client) }
                }
            }
        }
        try await client.shutdown()
    }

    /// Every instance runs this job, and one at a time delivers to a webhook: the one holding
    /// the webhook's store lock. The others try every few seconds and take over when the holder
    /// stops or dies (its lock goes with its connection or process).
    private func deliverWhileHolding(_ webhook: ServiceConfiguration.Webhook, client: HTTPClient) async {
        while !Task.isCancelled {
            do {
                let delivered: Void? = try await store.exclusively("webhook:" + webhook.key, wait: false) {
                    await deliver(to: webhook, client: client)
                }
                if delivered == nil { try await Task.sleep(for: Self.takeOverCheck) }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("webhook delivery paused", metadata: ["webhook": "\(webhook.key)", "error": "\(error)"])
                try? await Task.sleep(for: Self.takeOverCheck)
            }
        }
    }

    private static let takeOverCheck: Duration = .seconds(2)

    /// Delivers until cancelled, starting from the stored cursor.
    private func deliver(to webhook: ServiceConfiguration.Webhook, client: HTTPClient) async {
        var cursor: Int64?
        while !Task.isCancelled {
            do {
                let after: Int64
                if let cursor { after = cursor } else { after = try await store.webhookCursor(webhook.key) }
                cursor = after
                let feed = try await store.eventFeed(after: after, device: nil, limit: 100)
                if feed.isEmpty {
                    await signal.wait(timeout: pollInterval)
                    continue
                }
                for item in feed {
                    guard try await send(item, to: webhook, client: client) else { return }  // cancelled
                    cursor = item.seq
                }
            } catch {
                logger.error(
                    "webhook delivery: store failed", metadata: ["webhook": "\(webhook.key)", "error": "\(error)"])
                try? await Task.sleep(for: .seconds(5))
            }
        }
    }

    /// Sends one event until it is acknowledged or given up on; false if cancelled first.
    private func send(_ item: FeedEvent, to webhook: ServiceConfiguration.Webhook, client: HTTPClient) async throws
        -> Bool
    {
        let body = EventExport.json(item.event).canonicalText()
        let signature = HMAC<SHA256>.authenticationCode(
            for: Data(body.utf8), using: SymmetricKey(data: Data(webhook.secret.utf8)))
        var attempt = 0
        while true {
            attempt += 1
            let failure: (message: String, permanent: Bool)
            do {
                var request = HTTPClientRequest(url: webhook.url)
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.headers.add(
                    name: "X-Fencepost-Signature",
                    value: "sha256=" + signature.map { String(format: "%02x", $0) }.joined())
                request.headers.add(name: "X-Fencepost-Event-ID", value: item.event.id)
                request.headers.add(name: "X-Fencepost-Attempt", value: String(attempt))
                request.body = .bytes(ByteBuffer(string: body))
                let response = try await client.execute(request, timeout: timeout)
                _ = try? await response.body.collect(upTo: 1 << 16)
                let code = Int(response.status.code)
                if (200..<300).contains(code) {
                    try await store.advanceWebhook(webhook.key, to: item.seq)
                    return true
                }
                let transient = code >= 500 || code == 408 || code == 429
                failure = ("HTTP \(code)", !transient)
            } catch {
                failure = ("\(error)", false)
            }
            if failure.permanent || attempt >= maxAttempts {
                logger.warning(
                    "webhook gave up on an event",
                    metadata: [
                        "webhook": "\(webhook.key)", "event": "\(item.event.id)", "attempts": "\(attempt)",
                        "error": "\(failure.message)",
                    ])
                try await store.deadLetterWebhook(
                    webhook.key, seq: item.seq, eventID: item.event.id, payload: body, attempts: attempt,
                    error: failure.message)
                return true
            }
            do {
                try await Task.sleep(for: .seconds(Self.retries.delay(beforeRetry: attempt)))
            } catch {
                return false
            }
        }
    }
}
