package import AsyncHTTPClient
package import FencepostCore
package import FencepostStore

/// What a pull did.
package struct PullReport: Sendable {
    package var changes = 0
    package var added = 0
    package var updated = 0
    package var removed = 0
    /// Regions whose pulled change was skipped for a local edit not yet pushed.
    package var keptLocal: [String] = []
    package var refused: [(id: String, reason: String)] = []
    package var cursor: Int64 = 0
}

/// Pulls the backend's region changes after this store's cursor for that backend, page by
/// page; each page goes through the reconciler (the monitored set with the page's changes
/// applied is the desired set) and moves the cursor in the same transaction, so an
/// interrupted pull resumes where it stopped. Events and visits flow the other way (push).
package struct RegionPuller: Sendable {
    let store: Store
    let transport: SyncTransport
    let pageSize: Int

    package init(store: Store, endpoint: SyncEndpoint, client: HTTPClient, pageSize: Int = 500) {
        self.store = store
        self.transport = SyncTransport(endpoint: endpoint, client: client)
        self.pageSize = pageSize
    }

    var cursorKey: String { "pull.cursor \(transport.endpoint.baseURL)" }

    /// Pulls until the backend has nothing newer; a failed request is retried on `retries`
    /// for up to `giveUpAfter`, then thrown as a ``SyncFailure``.
    package func pull(retries: RetrySchedule = RetrySchedule(), giveUpAfter: Duration = .seconds(60)) async throws
        -> PullReport
    {
        var report = PullReport()
        report.cursor = await Int64(try store.syncState(cursorKey) ?? "0") ?? 0
        var failures = FailureStreak(schedule: retries)
        while true {
            let page: (changes: [SyncChange], nextCursor: Int64, hasMore: Bool)
            do {
                page = try await transport.changes(after: report.cursor, entities: "region", limit: pageSize)
                failures.reset()
            } catch {
                if case .refused = error { throw error }
                let delay = failures.failed()
                if failures.outlasts(giveUpAfter, waiting: delay) { throw error }
                try await Task.sleep(for: .seconds(delay))
                continue
            }
            let applied = try await store.applyPulledRegions(
                page.changes, cursorKey: cursorKey, cursor: page.nextCursor)
            report.changes += page.changes.count
            report.added += applied.plan.addCount
            report.updated += applied.plan.updateCount
            report.removed += applied.plan.removeCount
            report.keptLocal = Array(Set(report.keptLocal + applied.keptLocal)).sorted()
            report.refused += applied.refused
            report.cursor = page.nextCursor
            if !page.hasMore || page.changes.isEmpty { return report }
        }
    }
}
