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
    /// the requests. `progress` is called after every request.
    package func push(progress: (PushReport) -> Void = { _ in }) async throws -> PushReport {
        var report = PushReport()
        try await store.requeueInflight()
        var failures = FailureStreak(schedule: settings.retries)
        while true {
            try Task.checkCancellation()
            let batch = try await store.claimPushBatch(limit: settings.batchSize, maxBytes: settings.maxBatchBytes)
            guard !batch.isEmpty else { return report }
            report.requests += 1
            do {
                let results = try await transport.push(batch)
                let outcome = try await store.acknowledge(batch, results: results)
                report.delivered += outcome.delivered
                report.deadLettered += outcome.dead
                failures.reset()
            } catch let failure as SyncFailure {
                report.failedRequests += 1
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
                continue
            } catch {
                // Cancelled or the store failed: the batch goes back to pending untouched.
                _ = try? await store.requeueInflight()
                throw error
            }
            progress(report)
        }
    }
}
