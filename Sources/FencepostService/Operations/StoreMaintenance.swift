import FencepostStore
import Logging
import ServiceLifecycle

/// The store's housekeeping beside the live writer (``StoreDurability/maintain(every:onError:)``:
/// on a SQLite file, checkpoints of its log from a thread of their own, so the writer's commits
/// never stop to do them), until the service stops. A store with nothing to maintain waits for
/// the stop.
struct StoreMaintenance: Service {
    let durability: StoreDurability
    let interval: Duration
    let logger: Logger

    func run() async throws {
        let (durability, interval, logger) = (self.durability, self.interval, self.logger)
        let maintained = try await cancelWhenGracefulShutdown {
            try await durability.maintain(every: interval) { error in
                logger.warning("store maintenance failed", metadata: ["error": "\(error)"])
            }
        }
        if !maintained { try? await gracefulShutdown() }
    }
}
