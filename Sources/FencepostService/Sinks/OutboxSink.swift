package import FencepostStore

/// A destination fed with the outbox's events in order (``SinkDeliveryJob``): a webhook, a
/// Redis stream, a NATS JetStream subject. The job owns the cursor, the retries, the
/// dead letters and the lease; a sink only sends and says what the other side confirmed.
package protocol OutboxSink: Sendable {
    /// The sink's name in the configuration, `GET /v1/sinks` and `/metrics`.
    var name: String { get }
    /// `webhook`, `redis`, `nats`.
    var type: String { get }
    /// Names the sink's cursor and dead letters in the store.
    var cursorKey: String { get }
    /// Names the store lock that lets one instance at a time deliver to the sink.
    var leaseName: String { get }
    /// The most events handed to ``deliver(_:attempt:)`` at once.
    var batchSize: Int { get }
    /// Tries of one event before it goes to the dead-letter list (an unreachable broker does
    /// not count: the event is not at fault).
    var maxAttempts: Int { get }

    /// Sends `batch` (in outbox order, never empty) and reports how many of its first events
    /// the other side confirmed; `attempt` counts the tries of the first event, from 1.
    func deliver(_ batch: [FeedEvent], attempt: Int) async -> SinkReport

    /// Lets go of connections once delivery stops.
    func shutdown() async
}

extension OutboxSink {
    package func shutdown() async {}
}

/// What one ``OutboxSink/deliver(_:attempt:)`` achieved: the first `confirmed` events are
/// confirmed; `failure`, when set, is why the next one was not.
package struct SinkReport: Sendable {
    package var confirmed: Int
    package var failure: SinkFailure? = nil

    package init(confirmed: Int, failure: SinkFailure? = nil) {
        self.confirmed = confirmed
        self.failure = failure
    }

    package static func all(_ batch: [FeedEvent]) -> SinkReport { SinkReport(confirmed: batch.count, failure: nil) }
}

/// Why an event was not confirmed, and what that means for it.
package struct SinkFailure: Error, Sendable, CustomStringConvertible {
    package enum Kind: Sendable {
        /// The broker could not be reached or the connection broke: try again (with backoff)
        /// for as long as it takes; the event is not at fault.
        case unreachable
        /// The other side failed this time (a 5xx, a timeout): try again, up to the limit.
        case transient
        /// The other side refused the event for good (a 4xx): dead-letter it now.
        case permanent
    }

    package var kind: Kind
    package var message: String
    package var description: String { message }

    package static func unreachable(_ message: String) -> SinkFailure {
        SinkFailure(kind: .unreachable, message: message)
    }
    package static func transient(_ message: String) -> SinkFailure { SinkFailure(kind: .transient, message: message) }
    package static func permanent(_ message: String) -> SinkFailure { SinkFailure(kind: .permanent, message: message) }
}
