import AsyncHTTPClient
import FencepostStore
import FencepostSync
import Logging
import ServiceLifecycle

/// Forwards this instance's outbox to the configured backend, continuously: after each drain
/// it waits for new writes (or the poll interval), then pushes again. Failures retry with the
/// push's backoff without giving up (an unreachable backend only delays; everything stays
/// queued). It takes the store's sync lock for each round, so a `fencepost sync push` from the
/// command line and this job never send at the same time.
struct SyncPushJob: Service {
    let store: Store
    let endpoint: SyncEndpoint
    let settings: PushSettings
    let signal: ChangeSignal
    let pollInterval: Duration
    let logger: Logger

    func run() async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        await cancelWhenGracefulShutdown {
            let pusher = SyncPusher(store: store, endpoint: endpoint, settings: settings, client: client)
            while !Task.isCancelled {
                await round(pusher)
                await signal.wait(timeout: pollInterval)
            }
        }
        try await client.shutdown()
    }

    private func round(_ pusher: SyncPusher) async {
        do {
            // Another process (a CLI push, another instance) may hold the sync lock: skip the round.
            let logger = self.logger
            guard
                let report = try await store.exclusivelySyncing(
                    wait: false,
                    {
                        try await pusher.push { report in
                            if report.failedRequests > 0 {
                                logger.warning(
                                    "sync push retrying", metadata: ["failed_requests": "\(report.failedRequests)"])
                            }
                        }
                    })
            else { return }
            if report.delivered > 0 || report.deadLettered > 0 {
                logger.info(
                    "sync push",
                    metadata: ["delivered": "\(report.delivered)", "dead_lettered": "\(report.deadLettered)"])
            }
            if case .refused(let reason) = report.ending {
                logger.error("the sync backend refuses this instance's requests", metadata: ["reason": "\(reason)"])
                try await Task.sleep(for: .seconds(60))
            }
        } catch is CancellationError {
            return
        } catch {
            logger.error("sync push failed", metadata: ["error": "\(error)"])
            try? await Task.sleep(for: .seconds(5))
        }
    }
}
