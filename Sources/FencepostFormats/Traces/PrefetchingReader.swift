package import FencepostCore
import Foundation
import Synchronization

/// Reads a trace on a thread of its own, a few batches of fixes ahead of the consumer, so
/// parsing and monitoring use both cores. Memory is bounded: at most `depth` batches wait.
/// Dropping the reader stops the thread.
package final class PrefetchingReader: TraceReader {
    private let producer: Producer
    private var current: [Fix] = []
    private var index = 0

    /// Starts reading at once; `open` makes the underlying reader on the reading thread, whose
    /// batches (``TraceReader/nextBatch(upTo:)``, up to `batchSize` fixes each) are passed on.
    package init(
        batchSize: Int = 4096, depth: Int = 8,
        open: @escaping @Sendable () throws(TraceReadError) -> any TraceReader
    ) {
        let producer = Producer(depth: depth)
        self.producer = producer
        let thread = Thread { producer.produce(open: open, batchSize: batchSize) }
        thread.stackSize = 1 << 21
        thread.start()
    }

    deinit {
        producer.batches.cancel()
    }

    package var skipped: [String: Int] { producer.skipped }

    /// The fixes not taken yet of the batch ``next()`` is in, else the next batch; nil at the
    /// end. Read a batch at a time, a fix costs no call.
    package func nextBatch() throws(TraceReadError) -> [Fix]? {
        if index < current.count {
            defer { (current, index) = ([], 0) }
            return index == 0 ? current : Array(current[index...])
        }
        return try producer.batches.take()
    }

    package func next() throws(TraceReadError) -> Fix? {
        if index < current.count {
            defer { index += 1 }
            return current[index]
        }
        guard let batch = try producer.batches.take() else { return nil }
        current = batch
        index = 1
        return batch[0]
    }
}

/// The reading thread's side: batches into the queue, the reader's skip counts at the end.
private final class Producer: Sendable {
    let batches: BlockingQueue<[Fix]>
    private let finalSkipped = Mutex<[String: Int]>([:])

    init(depth: Int) {
        batches = BlockingQueue(depth: depth)
    }

    var skipped: [String: Int] { finalSkipped.withLock { $0 } }

    /// Runs on the reading thread.
    func produce(open: () throws(TraceReadError) -> any TraceReader, batchSize: Int) {
        do throws(TraceReadError) {
            var opened = try open()
            while let batch = try opened.nextBatch(upTo: batchSize) {
                guard batches.put(batch) else { return }
            }
            let skipped = opened.skipped
            finalSkipped.withLock { $0 = skipped }
            batches.finish(failure: nil)
        } catch {
            batches.finish(failure: error)  // the input is refused whole
        }
    }
}
