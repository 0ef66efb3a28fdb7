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
    /// Per device, the latest time seen in this input.
    private var latest: [String: Double] = [:]
    private let runs = FixRuns()

    package init(runFixes: Int = 250_000, window: Int = 50_000) {
        self.runFixes = runFixes
        self.window = window
    }

    /// Takes the input's next fix; `process` gets fixes as soon as their order is settled.
    package mutating func add(_ fix: Fix, process: (Fix) throws -> Void) throws {
        if streaming {
            try process(fix)
            return
        }
        if let previous = latest[fix.device], fix.time < previous {
            sorted = false
        } else {
            latest[fix.device] = fix.time
        }
        buffer.append(fix)
        if sorted, buffer.count >= window {
            // In order so far: stream the rest; a late straggler is dropped as out of order.
            streaming = true
            try drain(process)
        } else if !sorted, buffer.count >= runFixes {
            sortBuffer()
            try runs.spill(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    /// The input ended: processes what is still held, in order, and gets ready for the next input.
    package mutating func finish(process: (Fix) throws -> Void) throws {
        if !sorted { sortBuffer() }
        if runs.isEmpty {
            try drain(process)
        } else {
            try runs.merge(with: buffer, process)
            buffer.removeAll(keepingCapacity: true)
        }
        reset()
    }

    /// Forgets the current input (after a failure, or before the next input).
    package mutating func reset() {
        buffer.removeAll(keepingCapacity: true)
        runs.removeAll()
        sorted = true
        streaming = false
        latest.removeAll(keepingCapacity: true)
    }

    /// Sorts by time; stable, so fixes of one device keep their order at equal times.
    private mutating func sortBuffer() {
        buffer = buffer.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(
            \.element)
    }

    private mutating func drain(_ process: (Fix) throws -> Void) throws {
        for fix in buffer { try process(fix) }
        buffer.removeAll(keepingCapacity: true)
    }
}
