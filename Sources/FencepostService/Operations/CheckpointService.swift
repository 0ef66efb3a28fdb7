import FencepostStore
import Logging
import ServiceLifecycle

/// Checkpoints the store's write-ahead log every `interval` from a thread of its own, so the
/// live writer's commits never stop to do it (see ``WriteAheadLog``). On shutdown the writer
/// takes checkpoints back.
struct CheckpointService: Service {
    let log: WriteAheadLog
    let interval: Duration
    let logger: Logger
    private let thread = DedicatedThread("checkpoint")

    init(log: WriteAheadLog, interval: Duration, logger: Logger) {
        self.log = log
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        try log.startCheckpointing()
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled else { break }  // shutting down: the writer checkpoints last
                do {
                    let log = self.log
                    _ = try await thread.run { try log.checkpoint() }
                } catch {
                    logger.warning("checkpoint failed", metadata: ["error": "\(error)"])
                }
            }
        }
        do {
            try log.stopCheckpointing()
        } catch {
            logger.warning("could not give checkpoints back to the writer", metadata: ["error": "\(error)"])
        }
    }
}
