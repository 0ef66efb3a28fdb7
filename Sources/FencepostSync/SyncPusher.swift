package import AsyncHTTPClient
package import FencepostCore
package import FencepostStore
import Foundation

/// How a push behaves.
package struct PushSettings: Sendable {
    /// Mutations per request, and about how many payload bytes.
    package var batchSize: Int
    package var maxBatchBytes: Int
    /// Attempts that may have reached the backend before a mutation is dead-lettered.
    /// An unreachable backend does not use them up: it only delays.
    package var maxAttempts: Int
    package var retries: RetrySchedule
    /// The longest wait while the backend is unreachable: trying to connect costs it nothing,
    /// and the queue starts draining this soon after it comes back.
    package var unreachableRetryCap: Double
    /// Stop retrying once failures have gone on this long (the CLI); nil: retry until
    /// cancelled (the service job).
    package var giveUpAfter: Duration?

    package init(
        batchSize: Int = 500, maxBatchBytes: Int = 4 << 20, maxAttempts: Int = 10,
        retries: RetrySchedule = RetrySchedule(),
        giveUpAfter: Duration? = .seconds(120), unreachableRetryCap: Double = 5
    ) {
        self.unreachableRetryCap = unreachableRetryCap
        self.batchSize = batchSize
        self.maxBatchBytes = maxBatchBytes
        self.maxAttempts = maxAttempts
        self.retries = retries
        self.giveUpAfter = giveUpAfter
    }
}

/// What a push did.
package struct PushReport: Sendable {
    package enum Ending: Sendable {
        /// Nothing pending is left.
        case drained
        /// Failures went on past `giveUpAfter`; the rest stays queued.
        case gaveUp(String)
        /// The backend refused the requests themselves (token, scope, URL).
        case refused(String)
    }

    package var ending: Ending = .drained
    /// Acknowledged by the backend (applied or duplicate).
    package var delivered = 0
    /// Rejected by the backend or out of attempts, during this push.
    package var deadLettered = 0
    package var requests = 0
    package var failedRequests = 0
}

/// Sends the outbox to the backend in outbox order. A batch is claimed (`inflight`), sent, and
/// each mutation leaves the queue only on the backend's answer for it: applied or duplicate →
/// delivered, rejected → dead with the reason. A failed request puts its batch back to pending
/// and is retried after the schedule's delay (0 s, 1 s, 3 s, then doubling with jitter to the
/// cap; at least the backend's Retry-After). The caller holds the store's sync lock (``Store/exclusively(_:wait:_:)``).
///
/// One request is in flight at a time, and batches reach the backend in outbox order. While a
/// batch is sent, the store records the answers of the batch before it and claims the next:
/// the client's own two transactions a batch overlap the backend's work instead of adding to
/// it. The batch claimed ahead is sent only once the one before was answered; when that one
/// fails, both go back to pending (the claimed one untouched), so a retry starts again from the
/// lowest pending row, as it would with no batch claimed ahead.
package struct SyncPusher: Sendable {
    let store: Store
    let transport: SyncTransport
    let settings: PushSettings

    package init(store: Store, endpoint: SyncEndpoint, settings: PushSettings, client: HTTPClient) {
        self.store = store
        self.transport = SyncTransport(endpoint: endpoint, client: client)
        self.settings = settings
    }

    /// Pushes until nothing is pending, failures outlast `giveUpAfter`, or the backend refuses
    /// the requests. `progress` is called after every request (its counts may leave out the
    /// last answered batch, recorded while the next one is sent).
    package func push(progress: (PushReport) -> Void = { _ in }) async throws -> PushReport {
        var report = PushReport()
        try await store.requeueInflight()
        var failures = FailureStreak(schedule: settings.retries)
        // The batch claimed while the one before it was sent, and the last answered batch
        // whose answers are not recorded yet.
        var claimedAhead: [OutboxItem]?
        var answered: Answered?
        while true {
            try Task.checkCancellation()
            let batch: [OutboxItem]
            if let claimed = claimedAhead {
                batch = claimed
                claimedAhead = nil
            } else {
                batch = try await claim()
            }
            guard !batch.isEmpty else {
                try await record(&answered, in: &report)
                return report
            }
            report.requests += 1
            let outcome: Result<[String: SyncResult], SyncFailure>
            do {
                async let sent = send(batch)
                try await record(&answered, in: &report)
                claimedAhead = try await claim()
                outcome = await sent
            } catch {
                // Cancelled or the store failed: the batches go back to pending untouched
                // (one whose answers were not recorded is sent again: the backend answers
                // duplicate).
                _ = try? await store.requeueInflight()
                throw error
            }
            let failure: SyncFailure
            switch outcome {
            case .success(let results):
                answered = Answered(batch: batch, results: results)
                failures.reset()
                progress(report)
                continue
            case .failure(let error):
                failure = error
            }
            report.failedRequests += 1
            // The batch claimed ahead goes back untouched, before this one's failure is
            // recorded: it is sent after this one, never before.
            if claimedAhead != nil {
                try await store.requeueInflight()
                claimedAhead = nil
            }
            if case .refused(_, let message) = failure {
                try await store.recordPushFailure(
                    batch, error: failure.description, counts: false, maxAttempts: settings.maxAttempts,
                    retryAt: Date())
                report.ending = .refused(message)
                return report
            }
            var delay = failures.failed()
            if case .transient(_, let retryAfter?) = failure { delay = max(delay, retryAfter) }
            var counts = true
            if case .unreachable = failure {
                counts = false
                delay = min(delay, settings.unreachableRetryCap)
            }
            await report.deadLettered += try store.recordPushFailure(
                batch, error: failure.description, counts: counts, maxAttempts: settings.maxAttempts,
                retryAt: Date().addingTimeInterval(delay))
            if let limit = settings.giveUpAfter, failures.outlasts(limit, waiting: delay) {
                report.ending = .gaveUp(failure.description)
                return report
            }
            progress(report)
            try await Task.sleep(for: .seconds(delay))
        }
    }

    /// A batch the backend answered, and its answers.
    private struct Answered {
        var batch: [OutboxItem]
        var results: [String: SyncResult]
    }

    private func claim() async throws -> [OutboxItem] {
        try await store.claimPushBatch(limit: settings.batchSize, maxBytes: settings.maxBatchBytes)
    }

    /// The backend's answers, or why there are none: a failed request is an outcome, not an error.
    private func send(_ batch: [OutboxItem]) async -> Result<[String: SyncResult], SyncFailure> {
        do {
            return .success(try await transport.push(batch))
        } catch {
            return .failure(error)
        }
    }

    /// Records `answered`'s answers in the store, if there is one, and counts them.
    private func record(_ answered: inout Answered?, in report: inout PushReport) async throws {
        guard let done = answered else { return }
        answered = nil
        let outcome = try await store.acknowledge(done.batch, results: done.results)
        report.delivered += outcome.delivered
        report.deadLettered += outcome.dead
    }
}
