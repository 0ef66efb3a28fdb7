import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation
import Logging
import ServiceLifecycle

/// Delivers every new event to each sink (webhooks and brokers), in outbox order, through the
/// store: a sink's cursor advances only after its other side confirmed, so a crash or restart
/// re-sends at most what was in flight (receivers deduplicate by event id; Redis and JetStream
/// refuse the repeat themselves). An unreachable broker is retried for as long as it takes;
/// an event that fails is retried with backoff (1 s, 3 s, then doubling with jitter) and goes
/// to the dead-letter list when refused for good or out of attempts.
struct SinkDeliveryJob: Service {
    let store: Store
    let sinks: [any OutboxSink]
    let board: SinkBoard
    let signal: ChangeSignal
    let pollInterval: Duration
    let logger: Logger
    private static let retries = RetrySchedule(quick: [1, 3])
    /// Waits while a broker is unreachable: from 0.2 s, doubling to 5 s.
    private static let reconnects = RetrySchedule(quick: [0.2, 0.5, 1, 2], cap: 5)
    private static let takeOverCheck: Duration = .seconds(2)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                for sink in sinks {
                    group.addTask { await deliverWhileHolding(sink) }
                }
            }
        }
        for sink in sinks { await sink.shutdown() }
    }

    /// Every instance runs this job, and one at a time delivers to a sink: the one holding
    /// the sink's store lock. The others try every few seconds and take over when the holder
    /// stops or dies (its lock goes with its connection or process).
    private func deliverWhileHolding(_ sink: any OutboxSink) async {
        while !Task.isCancelled {
            do {
                let delivered: Void? = try await store.exclusively(sink.leaseName, wait: false) {
                    await deliver(to: sink)
                }
                if delivered == nil {
                    board.set(sink.name, .standby)
                    try await Task.sleep(for: Self.takeOverCheck)
                }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("sink delivery paused", metadata: ["sink": "\(sink.name)", "error": "\(error)"])
                try? await Task.sleep(for: Self.takeOverCheck)
            }
        }
    }

    /// Delivers until cancelled, starting from the stored cursor.
    private func deliver(to sink: any OutboxSink) async {
        var cursor: Int64?
        // Tries already made of the first event after the cursor, and unreachable tries in a row.
        var attempts = 0
        var unreachable = 0
        while !Task.isCancelled {
            do {
                let after: Int64
                if let cursor { after = cursor } else { after = try await store.webhookCursor(sink.cursorKey) }
                cursor = after
                let feed = try await store.eventFeed(after: after, device: nil, limit: sink.batchSize)
                if feed.isEmpty {
                    board.set(sink.name, .idle)
                    await signal.wait(timeout: pollInterval)
                    continue
                }
                board.set(sink.name, .delivering)
                let report = await sink.deliver(feed, attempt: attempts + 1)
                if Task.isCancelled { return }
                let confirmed = min(max(report.confirmed, 0), feed.count)
                if confirmed > 0 {
                    let last = feed[confirmed - 1].seq
                    try await store.advanceWebhook(sink.cursorKey, to: last)
                    cursor = last
                    board.delivered(sink.name, count: confirmed)
                    unreachable = 0
                }
                guard let failure = report.failure, confirmed < feed.count else {
                    attempts = 0
                    continue
                }
                attempts = confirmed > 0 ? 1 : attempts + 1
                board.failed(sink.name, failure)
                board.set(sink.name, .retrying)
                let item = feed[confirmed]
                let delay: Double
                switch failure.kind {
                case .unreachable:
                    attempts = 0
                    unreachable += 1
                    if unreachable == 1 || unreachable % 50 == 0 {
                        logger.warning(
                            "sink unreachable; trying again",
                            metadata: ["sink": "\(sink.name)", "error": "\(failure.message)"])
                    }
                    delay = Self.reconnects.delay(beforeRetry: unreachable)
                case .permanent, .transient:
                    if failure.kind == .permanent || attempts >= sink.maxAttempts {
                        try await giveUp(on: item, sink: sink, attempts: attempts, failure: failure)
                        cursor = item.seq
                        attempts = 0
                        continue
                    }
                    delay = Self.retries.delay(beforeRetry: attempts)
                }
                try await Task.sleep(for: .seconds(delay))
            } catch is CancellationError {
                return
            } catch {
                logger.error("sink delivery: store failed", metadata: ["sink": "\(sink.name)", "error": "\(error)"])
                try? await Task.sleep(for: .seconds(5))
            }
        }
    }

    /// Dead-letters one event and moves the cursor past it, in one transaction.
    private func giveUp(on item: FeedEvent, sink: any OutboxSink, attempts: Int, failure: SinkFailure) async throws {
        logger.warning(
            "sink gave up on an event",
            metadata: [
                "sink": "\(sink.name)", "event": "\(item.event.id)", "attempts": "\(attempts)",
                "error": "\(failure.message)",
            ])
        try await store.deadLetterWebhook(
            sink.cursorKey, seq: item.seq, eventID: item.event.id,
            payload: EventExport.json(item.event).canonicalText(), attempts: attempts, error: failure.message)
        board.deadLettered(sink.name)
    }
}
