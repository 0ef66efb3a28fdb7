import FencepostCore
import FencepostFormats
import Foundation

/// A ``ScanTally`` on a thread of its own for one input of events or visits: the monitor's
/// events come in batches, in the order it emitted them, and are made into ids, rows and text
/// there, so the thread that monitors does only that. Memory is bounded: at most `depth`
/// batches wait.
final class ScanEventThread: Sendable {
    private let batches: BlockingQueue<[MonitorEvent]>
    private let done = DispatchSemaphore(value: 0)
    private let worker: Worker

    /// Starts the thread with the tally the input's events go to.
    init(tally: ScanTally, depth: Int = 8) {
        let batches = BlockingQueue<[MonitorEvent]>(depth: depth)
        let worker = Worker(tally: tally)
        self.batches = batches
        self.worker = worker
        let thread = Thread { [done] in
            worker.run(batches)
            done.signal()
        }
        thread.stackSize = 1 << 21
        thread.start()
    }

    /// Hands over a batch of events (dropped once the thread has failed: ``finish()`` says why).
    func hand(_ events: [MonitorEvent]) {
        _ = batches.put(events)
    }

    /// Waits for the thread to take every batch; returns the tally, or throws what failed there.
    func finish() throws -> ScanTally {
        batches.finish(failure: nil)
        done.wait()
        return try worker.result()
    }

    /// The thread's side. `@unchecked Sendable`: `tally` and `failure` are used only by the
    /// thread until it signals `done`, and read only after ``ScanEventThread/finish()`` waited
    /// for that.
    private final class Worker: @unchecked Sendable {
        private var tally: ScanTally
        private var failure: (any Error)?

        init(tally: ScanTally) {
            self.tally = tally
        }

        func run(_ batches: BlockingQueue<[MonitorEvent]>) {
            do {
                while let events = try batches.take() { try tally.take(events) }
            } catch {
                failure = error
                batches.cancel()  // the monitoring thread hands nothing more
            }
        }

        func result() throws -> ScanTally {
            if let failure { throw failure }
            return tally
        }
    }
}

/// The monitoring thread's side of a ``ScanEventThread``: counts the fixes and hands the
/// events over in batches.
struct HandedOutcomes: FixOutcomes {
    private let thread: ScanEventThread
    private var batch: [MonitorEvent] = []
    private let batchSize: Int
    private(set) var fixesAccepted = 0
    private(set) var dropped: [FixDropReason: Int] = [:]

    init(thread: ScanEventThread, batchSize: Int = 256) {
        self.thread = thread
        self.batchSize = batchSize
    }

    mutating func accepted(_ fix: Fix, events: [MonitorEvent]) {
        fixesAccepted += 1
        guard !events.isEmpty else { return }
        batch.append(contentsOf: events)
        if batch.count >= batchSize { flush() }
    }

    mutating func dropped(_ fix: Fix, reason: FixDropReason) {
        dropped[reason, default: 0] += 1
    }

    /// Hands over the events still batched.
    mutating func flush() {
        guard !batch.isEmpty else { return }
        thread.hand(batch)
        batch = []
        batch.reserveCapacity(batchSize)
    }
}
