import FencepostStore
import Logging
import ServiceLifecycle

/// Hears other instances' commits (PostgreSQL's `LISTEN`) and wakes this instance's live
/// streams, webhook delivery and sync push at once instead of at their next poll. On a SQLite
/// store there is nothing to hear: those poll (``ServiceSettings/pollInterval``).
struct ChangeListener: Service {
    let store: Store
    let signal: ChangeSignal
    let logger: Logger

    func run() async throws {
        let signal = self.signal
        let listening = await cancelWhenGracefulShutdown {
            try? await store.watchChanges { signal.notify() }
        }
        // Nothing to listen to: stay until the service group stops.
        if listening == false { try? await gracefulShutdown() }
    }
}
