import FencepostCore
import FencepostGeometry
import FencepostStore

/// An input's accepted fixes on their way to the history (``FixHistory``): per device, the run
/// of its current hour, encoded as the fixes come (a few bytes each), closed when the hour
/// changes or it holds a chunk's worth; every run is handed to the transaction with the event
/// batches, and all of them once ``isFull``, so memory stays flat however many devices a file
/// holds.
struct HistoryBuffer {
    /// Tells whether a fix lies in a private region (nil: no region is private).
    let privacy: Monitor?
    /// The open runs, one per device, and where each device's is.
    private var open: [FixRun] = []
    private var openIndex: [String: Int] = [:]
    /// The last fix's device and its run's index: a file's fixes mostly come a device at a time.
    private var lastDevice = ""
    private var lastIndex = -1
    private var closed: [FixRun] = []
    private var count = 0
    /// Fixes held before the transaction is handed them (about 7 bytes each, encoded). Each
    /// hand-over waits for the batch of writes before it, a round trip or more on PostgreSQL:
    /// rarer than the event batches of a busy file, so they set the pace, not the history.
    static let flushCount = 65_536

    init(privacy: Monitor?) {
        self.privacy = privacy
    }

    var isFull: Bool { count >= Self.flushCount }

    /// Holds `fix` unless it lies in a private region. A region's test that fails (GEOS)
    /// counts as inside: when in doubt, a fix is not kept. Fixes older than the retention are
    /// kept too (an archive imported is there to look at); pruning deletes them later.
    mutating func add(_ fix: Fix) {
        if let privacy, (try? privacy.isPrivate(fix.position)) ?? true { return }
        let hour = FixHistory.hour(ofMs: Timestamp.milliseconds(fix.time))
        count += 1
        let index: Int
        if lastIndex >= 0, fix.device == lastDevice {
            index = lastIndex
        } else if let found = openIndex[fix.device] {
            index = found
        } else {
            index = open.count
            open.append(FixRun(device: fix.device, hourMs: hour))
            openIndex[fix.device] = index
        }
        (lastDevice, lastIndex) = (fix.device, index)
        if open[index].hourMs != hour || open[index].count >= FixHistory.chunkLimit
            || !open[index].follows(Timestamp.milliseconds(fix.time))
        {
            closed.append(open[index])
            open[index] = FixRun(device: fix.device, hourMs: hour)
        }
        open[index].append(fix)
    }

    /// Every run held, closed ones first (a device's runs in time order), and empties.
    mutating func take() -> [FixRun] {
        guard count > 0 else { return [] }
        var runs = closed
        runs.append(contentsOf: open.filter { $0.count > 0 })
        open.removeAll(keepingCapacity: true)
        openIndex.removeAll(keepingCapacity: true)
        closed.removeAll(keepingCapacity: true)
        (lastDevice, lastIndex, count) = ("", -1, 0)
        return runs
    }
}
