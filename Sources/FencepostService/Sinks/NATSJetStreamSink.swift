package import FencepostBrokers
import FencepostCore
import FencepostFormats
package import FencepostStore
import Foundation
package import NIOCore
import Synchronization

/// A NATS JetStream stream as a sink: each event is published on the subject (its `{device}`
/// filled in) with `Nats-Msg-Id` = the outbox row's idempotency key, and confirmed by
/// JetStream's publish ack: the stream has stored it. An event sent again (after a crash,
/// before the cursor advanced) is acked as a duplicate within the stream's duplicate window
/// (2 minutes by default) and not stored twice. The stream is created, covering the subject,
/// when the server has none of that name.
package final class NATSJetStreamSink: OutboxSink {
    package let name: String
    package let endpoint: BrokerEndpoint
    package let subject: NATSSubjectTemplate
    package let stream: String
    package let batchSize: Int
    package let maxAttempts: Int
    package let timeout: TimeAmount
    private let connection = Mutex<NATSConnection?>(nil)

    package init(
        name: String, endpoint: BrokerEndpoint, subject: NATSSubjectTemplate, stream: String, batchSize: Int,
        maxAttempts: Int, timeout: TimeAmount
    ) {
        self.name = name
        self.endpoint = endpoint
        self.subject = subject
        self.stream = stream
        self.batchSize = batchSize
        self.maxAttempts = maxAttempts
        self.timeout = timeout
    }

    package var type: String { "nats" }
    package var cursorKey: String { "sink:" + name }
    package var leaseName: String { "sink:" + name }

    package func deliver(_ batch: [FeedEvent], attempt: Int) async -> SinkReport {
        let results: [Result<NATSReply, any Error>]
        do {
            let requests = batch.map { item in
                NATSRequest(
                    subject: subject.subject(device: item.event.device),
                    headers: [("Nats-Msg-Id", item.idempotencyKey)],
                    payload: Array(EventExport.json(item.event).canonicalText().utf8))
            }
            results = try await connected().request(requests)
        } catch {
            await drop()
            return SinkReport(
                confirmed: 0, failure: .unreachable("NATS at \(endpoint.host):\(endpoint.port): \(error)"))
        }
        // An event JetStream did not store is tried again, after later ones it did store if
        // any: their order in the stream then differs from the outbox's, nothing is lost.
        for (index, result) in results.enumerated() {
            switch result {
            case .failure(let error):
                await drop()
                return SinkReport(
                    confirmed: index, failure: .unreachable("NATS at \(endpoint.host):\(endpoint.port): \(error)"))
            case .success(let reply):
                if let failure = Self.failure(of: reply, subject: subject.subject(device: batch[index].event.device)) {
                    return SinkReport(confirmed: index, failure: failure)
                }
            }
        }
        return .all(batch)
    }

    package func shutdown() async {
        await drop()
    }

    /// Why a publish ack is not one: nil when JetStream stored the message (or had it already).
    static func failure(of reply: NATSReply, subject: String) -> SinkFailure? {
        if reply.status == 503 {
            return .unreachable("no JetStream stream takes subject \(subject) (no responders)")
        }
        guard let ack = try? JSONParser.parse(reply.payload) else {
            return .transient("JetStream's publish ack is not JSON")
        }
        if let error = ack["error"] {
            return .transient("JetStream refused the message: \(error["description"]?.stringValue ?? "\(error)")")
        }
        guard ack["stream"]?.stringValue != nil, ack["seq"]?.numberValue != nil else {
            return .transient("JetStream's publish ack has no stream and seq")
        }
        return nil
    }

    private func connected() async throws -> NATSConnection {
        if let open = connection.withLock({ $0 }), open.isActive { return open }
        await drop()
        let fresh = try await NATSConnection.connect(to: endpoint, timeout: timeout)
        do {
            try await ensureStream(on: fresh)
        } catch {
            await fresh.close()
            throw error
        }
        connection.withLock { $0 = fresh }
        return fresh
    }

    /// Creates the stream, covering the subject, unless the server has it already.
    private func ensureStream(on connection: NATSConnection) async throws {
        let info = try await Self.ask(connection, "$JS.API.STREAM.INFO.\(stream)", payload: "")
        guard let error = info["error"] else { return }
        guard error["code"]?.numberValue == 404 else {
            throw BrokerError("JetStream cannot say whether stream \(stream) exists: \(error)")
        }
        let configuration: JSONValue = .object([
            "name": .string(stream), "subjects": .array([.string(subject.streamSubject)]), "storage": .string("file"),
        ])
        let created = try await Self.ask(
            connection, "$JS.API.STREAM.CREATE.\(stream)", payload: try JSONValueEncoder.canonicalText(configuration))
        if let error = created["error"] {
            throw BrokerError(
                "JetStream did not create stream \(stream): \(error["description"]?.stringValue ?? "\(error)")")
        }
    }

    /// One JetStream API request and its JSON answer.
    private static func ask(_ connection: NATSConnection, _ subject: String, payload: String) async throws
        -> JSONValue
    {
        let replies = try await connection.request([NATSRequest(subject: subject, payload: Array(payload.utf8))])
        guard let reply = try replies.first?.get() else { throw BrokerError("no answer from \(subject)") }
        if reply.status == 503 { throw BrokerError("JetStream is not enabled on the server (nats-server -js)") }
        return try JSONParser.parse(reply.payload)
    }

    private func drop() async {
        await connection.withLock { current in
            defer { current = nil }
            return current
        }?.close()
    }
}

/// A subject with an optional `{device}` token: `fencepost.events.{device}`.
package struct NATSSubjectTemplate: Sendable, Equatable {
    package let template: String

    /// Checks the template: dot-separated tokens, none empty, no wildcards or spaces, and
    /// `{device}`, when present, a whole token.
    package init(_ template: String) throws(BrokerError) {
        let tokens = template.split(separator: ".", omittingEmptySubsequences: false)
        for token in tokens {
            guard !token.isEmpty else { throw BrokerError("has an empty token: \(template)") }
            if token == "{device}" { continue }
            guard !token.contains(where: { $0 == "*" || $0 == ">" || $0 == "{" || $0 == "}" || $0.isWhitespace }) else {
                throw BrokerError("a token has a wildcard, a space or a brace other than {device}: \(template)")
            }
        }
        self.template = template
    }

    /// The subject of a device's events: characters NATS reads as separators or wildcards
    /// (`.`, `*`, `>`, spaces) in the device id become `_`.
    package func subject(device: String) -> String {
        let token = String(device.map { $0 == "." || $0 == "*" || $0 == ">" || $0.isWhitespace ? "_" : $0 })
        return template.replacingOccurrences(of: "{device}", with: token.isEmpty ? "_" : token)
    }

    /// What the stream subscribes to: every device's subject.
    package var streamSubject: String { template.replacingOccurrences(of: "{device}", with: "*") }
}
