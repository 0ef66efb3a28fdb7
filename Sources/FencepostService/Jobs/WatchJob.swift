import FencepostIngest
import FencepostStore
import Logging
import ServiceLifecycle
import Synchronization

/// `serve`'s `"watch"` job, and all of `fencepost watch`: the ``Watcher`` looking at its folders
/// whenever they change and at least every quarter second. A line is logged per file and per
/// apply; the metrics count files imported, refused and pending.
///
/// On graceful shutdown it finishes the file it is importing (the import commits whole or not
/// at all either way) and stops.
struct WatchJob: Service {
    let watcher: WatcherBox
    let metrics: ServiceMetrics?
    static let lookInterval = 0.25

    /// `metrics` nil: no service around it (`fencepost watch`).
    init(store: Store, folders: Watcher.Folders, options: FileImport.Options, metrics: ServiceMetrics?, logger: Logger)
        async throws
    {
        let box = WatcherBox()
        box.watcher = try await Watcher(store: store, folders: folders, options: options) { [weak box] report in
            for line in report.lines {
                if report.isProblem { logger.warning("\(line)") } else { logger.info("\(line)") }
            }
            for line in report.details { logger.debug("\(line)") }
            metrics?.recordWatch(report, pending: box?.watcher?.pending ?? 0)
        }
        self.watcher = box
        self.metrics = metrics
    }

    func run() async throws {
        let stopping = StopFlag()
        let (watcher, metrics, interval) = (watcher, metrics, Self.lookInterval)
        await withGracefulShutdownHandler {
            while !stopping.isSet, !Task.isCancelled {
                await watcher.watcher?.look(shouldStop: { stopping.isSet })
                metrics?.recordInboxPending(watcher.watcher?.pending ?? 0)
                guard !stopping.isSet else { break }
                await watcher.watcher?.waitForChange(timeout: interval)
            }
        } onGracefulShutdown: {
            stopping.set()
        }
    }
}

/// The watcher, used by the job only (one look or wait at a time, in turn).
final class WatcherBox: @unchecked Sendable {
    var watcher: Watcher?
}

private final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
