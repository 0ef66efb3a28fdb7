import FencepostStore
import Foundation
import Logging
import ServiceLifecycle

/// Deletes the stored fixes older than the store's `history_days`, at start and then hourly,
/// once per hour whatever the number of instances (the first that finds it due runs it), as
/// ``OutboxCleanupJob`` does for the outbox.
struct HistoryPruneJob: Service {
    let store: Store
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    guard try await store.claimPeriodicRun("history-prune", every: interval) else {
                        try? await Task.sleep(for: .seconds(60))
                        continue
                    }
                    let deleted = try await store.pruneHistory()
                    if deleted > 0 { logger.info("history pruned", metadata: ["fixes": "\(deleted)"]) }
                } catch {
                    // Stopping: a run cut short is not a failure.
                    if Task.isCancelled { break }
                    logger.error("history prune failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
