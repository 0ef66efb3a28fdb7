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
    let store: Store
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
        let body: String
        var contentType = "application/json"
        var url = webhook.url
        if let template = webhook.template {
            let names: WebhookTemplate.Names
            do {
                names = try await self.names()
            } catch {
                return SinkReport(confirmed: 0, failure: .transient("the store did not give the names: \(error)"))
            }
            let values = WebhookTemplate.values(of: item.event, names: names, zone: template.zone)
            url = WebhookTemplate.fill(url, with: values) {
                $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? ""
            }
            do {
                switch template.render(item.event, names: names) {
                // A text template is sent as it is (ntfy takes the message as the body).
                case .string(let text): (body, contentType) = (text, "text/plain; charset=utf-8")
                case let rendered: body = try JSONValueEncoder.canonicalText(rendered)
                }
            } catch {
                return SinkReport(confirmed: 0, failure: .permanent("the template did not render: \(error)"))
            }
        } else {
            body = EventExport.json(item.event).canonicalText()
        }
        let signature = HMAC<SHA256>.authenticationCode(
            for: Data(body.utf8), using: SymmetricKey(data: Data(webhook.secret.utf8)))
        do {
            var request = HTTPClientRequest(url: url)
            request.method = webhook.method == "PUT" ? .PUT : .POST
            for (name, value) in webhook.headers.sorted(by: { $0.key < $1.key }) {
                request.headers.add(name: name, value: value)
            }
            request.headers.add(name: "Content-Type", value: contentType)
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

    /// The regions' and the roster's names, read when an event is sent (they may change).
    private func names() async throws -> WebhookTemplate.Names {
        var names = WebhookTemplate.Names()
        for region in try await store.regions() { names.regions[region.id] = region.name ?? region.id }
        for entry in try await store.roster().entries.values {
            names.devices[entry.device] = entry.name ?? entry.device
        }
        return names
    }
}
