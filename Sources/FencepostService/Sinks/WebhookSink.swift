import AsyncHTTPClient
import Crypto
import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation
import NIOCore
import NIOHTTP1

/// A webhook as a sink: one event per POST, its JSON signed with HMAC-SHA256 of the body
/// under the webhook's secret (`X-Fencepost-Signature: sha256=<hex>`), confirmed by a 2xx.
/// Connection errors, timeouts, 5xx, 408 and 429 are tried again; any other 4xx refuses the
/// event for good.
struct WebhookSink: OutboxSink {
    let webhook: ServiceConfiguration.Webhook
    let client: HTTPClient
    let maxAttempts: Int
    let timeout: TimeAmount

    var name: String { webhook.key }
    var type: String { "webhook" }
    // The names webhooks have had since before sinks: their cursors and leases carry on.
    var cursorKey: String { webhook.key }
    var leaseName: String { "webhook:" + webhook.key }
    var batchSize: Int { 1 }

    func deliver(_ batch: [FeedEvent], attempt: Int) async -> SinkReport {
        guard let item = batch.first else { return SinkReport(confirmed: 0) }
        let body = EventExport.json(item.event).canonicalText()
        let signature = HMAC<SHA256>.authenticationCode(
            for: Data(body.utf8), using: SymmetricKey(data: Data(webhook.secret.utf8)))
        do {
            var request = HTTPClientRequest(url: webhook.url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(
                name: "X-Fencepost-Signature", value: "sha256=" + signature.map { String(format: "%02x", $0) }.joined())
            request.headers.add(name: "X-Fencepost-Event-ID", value: item.event.id)
            request.headers.add(name: "X-Fencepost-Attempt", value: String(attempt))
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await client.execute(request, timeout: timeout)
            _ = try? await response.body.collect(upTo: 1 << 16)
            let code = Int(response.status.code)
            if (200..<300).contains(code) { return SinkReport(confirmed: 1) }
            let transient = code >= 500 || code == 408 || code == 429
            return SinkReport(
                confirmed: 0, failure: transient ? .transient("HTTP \(code)") : .permanent("HTTP \(code)"))
        } catch {
            return SinkReport(confirmed: 0, failure: .transient("\(error)"))
        }
    }
}
