import FencepostStore
import Foundation
import Logging
import ServiceLifecycle

/// Deletes outbox rows delivered more than the retention ago, once at start and then hourly.
struct OutboxCleanupJob: Service {
    let store: Store
    let retention: Duration
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let cutoff = Date().addingTimeInterval(-Double(retention.components.seconds))
                    let deleted = try await store.deleteDeliveredOutbox(before: cutoff)
                    if deleted > 0 { logger.info("outbox cleanup", metadata: ["deleted": "\(deleted)"]) }
                } catch {
                    logger.error("outbox cleanup failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
