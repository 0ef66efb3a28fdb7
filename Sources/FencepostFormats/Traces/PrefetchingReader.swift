public import FencepostCore
import Foundation

/// Reads a trace on a thread of its own, a few batches of fixes ahead of the consumer, so
/// parsing and monitoring use both cores. Memory is bounded: at most `depth` batches wait.
/// Dropping the reader stops the thread.
public final class PrefetchingReader: TraceReader {
    private let channel: Channel
    private var current: [Fix] = []
    private var index = 0

    /// Starts reading at once; `open` makes the underlying reader on the reading thread.
    public init(
        batchSize: Int = 4096, depth: Int = 8,
        open: @escaping @Sendable () throws(TraceReadError) -> any TraceReader
    ) {
        let channel = Channel(depth: depth)
        self.channel = channel
        let thread = Thread { channel.produce(open: open, batchSize: batchSize) }
        thread.stackSize = 1 << 21
        thread.start()
    }

    deinit {
        channel.cancel()
    }

    public var skipped: [String: Int] { channel.skipped }

    public func next() throws(TraceReadError) -> Fix? {
        if index < current.count {
            defer { index += 1 }
            return current[index]
        }
        guard let batch = try channel.take() else { return nil }
        current = batch
        index = 1
        return batch[0]
    }
}

/// The hand-over between the reading thread and the consumer.
///
/// `@unchecked Sendable`: every stored property is read and written only with `condition`
/// locked; the reader itself never leaves the reading thread.
private final class Channel: @unchecked Sendable {
    private let condition = NSCondition()
    private let depth: Int
    private var batches: [[Fix]] = []
    private var finished = false
    private var cancelled = false
    private var failure: TraceReadError?
    private var finalSkipped: [String: Int] = [:]

    init(depth: Int) {
        self.depth = depth
    }

    var skipped: [String: Int] {
        condition.lock()
        defer { condition.unlock() }
        return finalSkipped
    }

    /// The next batch, nil at the end, or the reader's error.
    func take() throws(TraceReadError) -> [Fix]? {
        condition.lock()
        defer { condition.unlock() }
        while batches.isEmpty, !finished { condition.wait() }
        if batches.isEmpty {
            if let failure { throw failure }
            return nil
        }
        condition.signal()
        return batches.removeFirst()
    }

    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Runs on the reading thread.
    func produce(open: () throws(TraceReadError) -> any TraceReader, batchSize: Int) {
        var batch: [Fix] = []
        batch.reserveCapacity(batchSize)
        do throws(TraceReadError) {
            var opened = try open()
            while let fix = try opened.next() {
                batch.append(fix)
                if batch.count == batchSize {
                    guard push(batch) else { return }
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if !batch.isEmpty, !push(batch) { return }
            finish(error: nil, skipped: opened.skipped)
        } catch {
            finish(error: error, skipped: [:])  // the input is refused whole
        }
    }

    /// Hands a batch over, waiting while `depth` are queued; false when the consumer is gone.
    private func push(_ batch: [Fix]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while batches.count >= depth, !cancelled { condition.wait() }
        guard !cancelled else { return false }
        batches.append(batch)
        condition.signal()
        return true
    }

    private func finish(error: TraceReadError?, skipped: [String: Int]) {
        condition.lock()
        finished = true
        failure = error
        finalSkipped = skipped
        condition.broadcast()
        condition.unlock()
    }
}
