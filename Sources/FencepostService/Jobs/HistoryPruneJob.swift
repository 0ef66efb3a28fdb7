import FencepostStore
import Foundation
import Logging
import ServiceLifecycle

/// Deletes the stored fixes older than the store's `history_days`, and the events and visits
/// older than `events_days` and `visits_days` when those are set, at start and then hourly,
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
                    let (events, visits) = try await store.pruneEventsAndVisits()
                    if events + visits > 0 {
                        logger.info(
                            "events and visits pruned", metadata: ["events": "\(events)", "visits": "\(visits)"])
                    }
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
