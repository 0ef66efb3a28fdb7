package import FencepostCore

/// Puts one input's fixes in time order per device, the order the filter and the monitor need,
/// with memory bounded whatever the input's size: an input that arrives in order (per device:
/// a file sorted by device, then time, is in order) streams through once its first `window`
/// fixes show it is; one that does not is sorted, in memory or, past `runFixes`, through
/// sorted runs in temporary files merged back (``FixRuns``). An input that had to be sorted is
/// processed in time order across devices (at equal times, in input order).
package struct FixOrder {
    private let runFixes: Int
    private let window: Int
    /// Fixes waiting until they are known to be in order.
    private var buffer: [Fix] = []
    private var sorted = true
    private var streaming = false
    /// Per device, the latest time seen in this input; the current run's device's is in
    /// `current` instead (a file of one device, or sorted by device, looks a name up only when
    /// the device changes, not at every fix).
    private var latest: [String: Double] = [:]
    private var current: (device: String, latest: Double)?
    private let runs = FixRuns()
    /// Fixes whose order is settled, not taken yet: held ones from `readyIndex` on, then the one
    /// just added while streaming, then the merge of sorted runs.
    private var ready: [Fix] = []
    private var readyIndex = 0
    private var streamed: Fix?
    private var merge: FixRuns.Merge?

    package init(runFixes: Int = 250_000, window: Int = 50_000) {
        self.runFixes = runFixes
        self.window = window
    }

    /// Takes the input's next fix; ``next()`` then gives the fixes whose order is settled, which
    /// must all be taken before the next fix is added.
    package mutating func add(_ fix: Fix) throws {
        if streaming {
            streamed = fix
            return
        }
        if current?.device != fix.device {
            if let current { latest[current.device] = current.latest }
            current = (fix.device, latest[fix.device] ?? -.infinity)
        }
        if let run = current, fix.time < run.latest {
            sorted = false
        } else {
            current?.latest = fix.time
        }
        buffer.append(fix)
        if sorted, buffer.count >= window {
            // In order so far: stream the rest; a late straggler is dropped as out of order.
            streaming = true
            hold()
        } else if !sorted, buffer.count >= runFixes {
            sortBuffer()
            try runs.spill(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    /// Whether the input streams (it showed it is in order) and every settled fix was taken:
    /// the next fix added would be settled at once.
    var streamsWithNothingHeld: Bool {
        // Not `streamed == nil`: that resolved to Equatable's `==` on two `Fix?`s, a copy of
        // the optional fix through its metadata and value witnesses once a fix.
        guard streaming, case .none = streamed else { return false }
        return readyIndex >= ready.count
    }

    /// The next fix whose order is settled, nil when there is none until the next ``add(_:)``
    /// (or, after ``finish()``, none left).
    package mutating func next() throws -> Fix? {
        if readyIndex < ready.count {
            defer { readyIndex += 1 }
            return ready[readyIndex]
        }
        if !ready.isEmpty {
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
        }
        if let fix = streamed {
            streamed = nil
            return fix
        }
        if merge != nil {
            if let fix = try merge!.next() { return fix }
            merge = nil
            runs.removeAll()
        }
        return nil
    }

    /// The input ended: what is still held becomes settled, in order (``next()``), and the
    /// order is ready for the next input once it is taken.
    package mutating func finish() throws {
        if !sorted { sortBuffer() }
        if runs.isEmpty {
            hold()
        } else {
            merge = try runs.merging(with: buffer)
            buffer.removeAll(keepingCapacity: true)
        }
        sorted = true
        streaming = false
        latest.removeAll(keepingCapacity: true)
        current = nil
    }

    /// Forgets the current input (after a failure, or before the next input).
    package mutating func reset() {
        buffer.removeAll(keepingCapacity: true)
        ready.removeAll(keepingCapacity: true)
        readyIndex = 0
        streamed = nil
        merge = nil
        runs.removeAll()
        sorted = true
        streaming = false
        latest.removeAll(keepingCapacity: true)
        current = nil
    }

    /// Sorts by time; stable, so fixes of one device keep their order at equal times.
    private mutating func sortBuffer() {
        buffer = buffer.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(
            \.element)
    }

    /// The held fixes become settled, in the order held.
    private mutating func hold() {
        swap(&ready, &buffer)
        readyIndex = 0
    }
}
