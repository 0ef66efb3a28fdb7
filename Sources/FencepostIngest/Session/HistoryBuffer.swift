import FencepostCore
import FencepostGeometry
import FencepostStore

/// An input's accepted fixes on their way to the history (``FixHistory``): per device, the run
/// of its current hour, closed when the hour changes or it is a chunk's size; every run is
/// handed to the transaction with the event batches, and all of them once ``isFull``, so
/// memory stays flat however many devices a file holds.
struct HistoryBuffer {
    /// Tells whether a fix lies in a private region (nil: no region is private).
    let privacy: Monitor?
    private var open: [String: FixRun] = [:]
    private var closed: [FixRun] = []
    private var count = 0
    /// Fixes held before the transaction is handed them.
    static let flushCount = 8_192

    init(privacy: Monitor?) {
        self.privacy = privacy
    }

    var isFull: Bool { count >= Self.flushCount }

    /// Holds `fix` unless it lies in a private region. A region's test that fails (GEOS)
    /// counts as inside: when in doubt, a fix is not kept. Fixes older than the retention are
    /// kept too (an archive imported is there to look at); pruning deletes them later.
    mutating func add(_ fix: Fix) {
        let ms = Timestamp.milliseconds(fix.time)
        if let privacy, (try? privacy.isPrivate(fix.position)) ?? true { return }
        let hour = FixHistory.hour(ofMs: ms)
        count += 1
        guard let index = open.index(forKey: fix.device) else {
            open[fix.device] = FixRun(device: fix.device, hourMs: hour, fixes: [fix])
            return
        }
        if open.values[index].hourMs == hour, open.values[index].fixes.count < FixHistory.chunkLimit {
            open.values[index].fixes.append(fix)
        } else {
            closed.append(open.values[index])
            open.values[index] = FixRun(device: fix.device, hourMs: hour, fixes: [fix])
        }
    }

    /// Every run held, closed ones first (a device's runs in time order), and empties.
    mutating func take() -> [FixRun] {
        guard count > 0 else { return [] }
        var runs = closed
        runs.append(contentsOf: open.values.sorted { $0.device < $1.device })
        open.removeAll(keepingCapacity: true)
        closed.removeAll(keepingCapacity: true)
        count = 0
        return runs
    }
}
