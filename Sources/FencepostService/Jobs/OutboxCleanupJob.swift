import FencepostStore
import Foundation
import Logging
import ServiceLifecycle

/// Deletes outbox rows delivered more than the retention ago, at start and then hourly: once
/// per hour whatever the number of instances (the first that finds it due runs it).
struct OutboxCleanupJob: Service {
    let store: Store
    let retention: Duration
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    guard try await store.claimPeriodicRun("outbox-cleanup", every: interval) else {
                        try? await Task.sleep(for: .seconds(60))
                        continue
                    }
                    let cutoff = Date().addingTimeInterval(-Double(retention.components.seconds))
                    let deleted = try await store.deleteDeliveredOutbox(before: cutoff)
                    if deleted > 0 { logger.info("outbox cleanup", metadata: ["deleted": "\(deleted)"]) }
                } catch {
                    // Stopping: a run cut short is not a failure.
                    if Task.isCancelled { break }
                    logger.error("outbox cleanup failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
