package import FencepostCore
package import FencepostStore
import Foundation
import ServiceLifecycle

/// What the live writer tells whoever watches it (the service's metrics and streams).
package protocol LiveIngestReporting: Sendable {
    /// A group of requests' fixes was committed, taking `duration`.
    func committedGroup(fixes: Int, duration: Duration)
    /// One request's fixes, and what they did.
    func ingested(fixes: Int, outcome: BatchOutcome)
    /// A sync put commits on disk, taking `duration`.
    func synced(duration: Duration)
    /// The store did housekeeping between groups (its log started over), taking `duration`.
    func keptStoreSmall(duration: Duration)
    /// A group made events: streams and webhooks have something new.
    func newEvents()
}

/// The one writer of live fixes: requests queue their (validated) batches, and the writer
/// takes everything queued, ingests it in one transaction off the async threads, and answers
/// each request with what its own batch did. Many small requests thus share one commit (group
/// commit), and every fix still goes filter → monitor → visit tracker → store, as `ingest` does.
///
/// With durable commits, a committed group is answered by a second loop once its commit is on
/// disk: that loop syncs the log once for every group committed since its last sync, while the
/// writer already ingests the next group, so the disk's latency is shared, not added per group.
///
/// A ServiceLifecycle service: on graceful shutdown it stops taking batches and finishes (and
/// answers) the ones already queued before it returns.
package final class LiveIngestor: Service, Sendable {
    private let queue = BatchingQueue<PendingBatch>()
    private let committed = BatchingQueue<(PendingBatch, BatchOutcome)>()
    private let durability: StoreDurability
    private let session: SessionBox
    private let reporting: any LiveIngestReporting
    /// A group holds at most this many fixes (several requests' worth).
    private static let groupFixes = 20_000
    /// The devices whose progress the writer keeps in memory, unless the options say otherwise
    /// (``IngestOptions/keptDevices``): a device's state is a few kilobytes, and the service
    /// may see millions of devices over its life.
    package static let keptDevices = 20_000
    /// A fix posted more than five minutes after it was taken is replayed
    /// (``IngestOptions/replayedAfter``), unless the options say otherwise: longer than a
    /// phone's usual batching, shorter than what a notification could still announce as news.
    package static let replayedAfter: Double = 300

    /// Refused: the writer is stopping (the client may send the fixes again later).
    package struct ShuttingDown: Error {}

    package init(
        store: Store, options: IngestOptions, durability: StoreDurability, reporting: any LiveIngestReporting
    ) async throws {
        var options = options
        options.keptDevices = options.keptDevices ?? Self.keptDevices
        options.replayedAfter = options.replayedAfter ?? Self.replayedAfter
        self.session = SessionBox(try await IngestSession(store: store, options: options))
        self.durability = durability
        self.reporting = reporting
    }

    /// Ingests `fixes` (one request) and returns what they did, once committed (and, with
    /// durable commits, on disk).
    package func ingest(_ fixes: [Fix]) async throws -> BatchOutcome {
        try await queue.submit(fixes)
    }

    package func run() async throws {
        // A graceful shutdown and a cancellation (the group cancelled because another service
        // failed, such as a server that could not bind) both close the queue: what is queued is
        // still written and answered, then the loop ends. Waiting on the queue alone would keep
        // the group, and the process, alive for ever.
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withDiscardingTaskGroup { tasks in
                    tasks.addTask { await self.answerWhenDurable() }
                    while let group = await queue.take(limit: Self.groupFixes, weight: { $0.fixes.count }) {
                        await write(group)
                    }
                    await committed.close()
                }
            } onGracefulShutdown: {
                Task { await self.queue.close() }
            }
        } onCancel: {
            Task { await self.queue.close() }
        }
    }

    /// Answers committed groups once the log holds them on disk: one sync for all of them.
    private func answerWhenDurable() async {
        while let groups = await committed.take() {
            do {
                let started = ContinuousClock.now
                try await durability.commitsDurable()
                reporting.synced(duration: .now - started)
                for (pending, outcome) in groups { pending.continuation.resume(returning: outcome) }
            } catch {
                // Committed but maybe not on disk: the client retries, and what is already
                // stored is dropped as seen.
                for (pending, _) in groups { pending.continuation.resume(throwing: error) }
            }
        }
    }

    private func write(_ group: [PendingBatch]) async {
        let batches = group.map(\.fixes)
        do {
            let session = self.session
            let started = ContinuousClock.now
            let outcomes = try await session.value.ingest(batches: batches)
            reporting.committedGroup(fixes: batches.reduce(0) { $0 + $1.count }, duration: .now - started)
            for (pending, outcome) in zip(group, outcomes) {
                reporting.ingested(fixes: pending.fixes.count, outcome: outcome)
            }
            if outcomes.contains(where: { !$0.events.isEmpty }) { reporting.newEvents() }
            await committed.append(Array(zip(group, outcomes)))
        } catch {
            for pending in group { pending.continuation.resume(throwing: error) }
        }
        // Between groups, while the answers of the last one wait for the disk.
        let started = ContinuousClock.now
        if await durability.afterCommit() { reporting.keptStoreSmall(duration: .now - started) }
    }
}

/// The session is used by the writer loop only, one group at a time, on a thread-pool thread.
private final class SessionBox: @unchecked Sendable {
    let value: IngestSession
    init(_ value: IngestSession) { self.value = value }
}

/// A request's batch waiting for the writer, with the continuation its answer resumes.
struct PendingBatch {
    var fixes: [Fix]
    var continuation: CheckedContinuation<BatchOutcome, any Error>
}

extension BatchingQueue where Item == PendingBatch {
    /// Queues a request's batch and waits for its answer; refused once closed (shutting down).
    func submit(_ fixes: [Fix]) async throws -> BatchOutcome {
        guard !closed else { throw LiveIngestor.ShuttingDown() }
        return try await withCheckedThrowingContinuation { continuation in
            append([PendingBatch(fixes: fixes, continuation: continuation)])
        }
    }
}
