package import FencepostBrokers
import FencepostCore
import FencepostFormats
package import FencepostStore
package import NIOCore
import Synchronization

/// A Redis stream as a sink: each event is `XADD STREAM SEQ-0 id … device … kind … event JSON`,
/// its entry id the event's outbox sequence. Redis refuses an id not above the stream's last
/// one, so an event sent again (after a crash, before the cursor advanced) is refused by Redis
/// itself, and that refusal counts as delivered. The stream is Fencepost's: another writer
/// adding entries with larger ids would make Redis refuse ours.
package final class RedisStreamSink: OutboxSink {
    package let name: String
    package let endpoint: BrokerEndpoint
    package let stream: String
    package let batchSize: Int
    package let maxAttempts: Int
    package let timeout: TimeAmount
    private let connection = Mutex<RedisConnection?>(nil)

    package init(
        name: String, endpoint: BrokerEndpoint, stream: String, batchSize: Int, maxAttempts: Int, timeout: TimeAmount
    ) {
        self.name = name
        self.endpoint = endpoint
        self.stream = stream
        self.batchSize = batchSize
        self.maxAttempts = maxAttempts
        self.timeout = timeout
    }

    package var type: String { "redis" }
    package var cursorKey: String { "sink:" + name }
    package var leaseName: String { "sink:" + name }

    package func deliver(_ batch: [FeedEvent], attempt: Int) async -> SinkReport {
        let replies: [RESPValue]
        do {
            replies = try await connected().send(batch.map(command))
        } catch {
            await drop()
            return SinkReport(
                confirmed: 0, failure: .unreachable("Redis at \(endpoint.host):\(endpoint.port): \(error)"))
        }
        for (index, reply) in replies.enumerated() {
            guard case .error(let message) = reply, !Self.isRepeat(message) else { continue }
            // A later event of the batch is in the stream: this one can never be added at its
            // place (Redis ids only grow), so trying again would only be refused as a repeat.
            let overtaken = replies[(index + 1)...].contains { if case .error = $0 { false } else { true } }
            return SinkReport(
                confirmed: index,
                failure: overtaken
                    ? .permanent("Redis refused the event and took later ones: \(message)")
                    : .transient("Redis refused the event: \(message)"))
        }
        return .all(batch)
    }

    package func shutdown() async {
        await drop()
    }

    /// `XADD` refuses an id not above the stream's last: the event is already there.
    package static func isRepeat(_ error: String) -> Bool {
        error.contains("equal or smaller than the target stream top item")
    }

    private func command(_ item: FeedEvent) -> [[UInt8]] {
        let event = item.event
        return [
            Array("XADD".utf8), Array(stream.utf8), Array("\(item.seq)-0".utf8),
            Array("id".utf8), Array(event.id.utf8),
            Array("device".utf8), Array(event.device.utf8),
            Array("kind".utf8), Array(event.kind.utf8),
            Array("event".utf8), Array(EventExport.json(event).canonicalText().utf8),
        ]
    }

    private func connected() async throws -> RedisConnection {
        if let open = connection.withLock({ $0 }), open.isActive { return open }
        await drop()
        let fresh = try await RedisConnection.connect(to: endpoint, timeout: timeout)
        connection.withLock { $0 = fresh }
        return fresh
    }

    private func drop() async {
        await connection.withLock { current in
            defer { current = nil }
            return current
        }?.close()
    }
}
