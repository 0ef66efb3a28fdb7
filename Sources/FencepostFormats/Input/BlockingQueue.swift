import Foundation

/// A short queue between a producing thread and a consuming thread, both of which block: the
/// producer waits while `depth` items are queued, so memory stays bounded; the consumer waits
/// for the next item, the end, or the producer's error. Cancelling (the consumer is gone)
/// releases a waiting producer. For threads only: between tasks, an actor that never blocks a
/// thread does this (the service's `BatchingQueue`).
///
/// `@unchecked Sendable`: every stored property is read and written only with `condition` locked.
package final class BlockingQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private let depth: Int
    private var items: [Element] = []
    private var finished = false
    private var cancelled = false
    private var failure: TraceReadError?

    package init(depth: Int) {
        self.depth = depth
    }

    /// Producer side: queues an item, waiting while the queue is full; false once cancelled.
    package func put(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= depth, !cancelled { condition.wait() }
        guard !cancelled else { return false }
        items.append(item)
        condition.signal()
        return true
    }

    /// Producer side: no more items; `failure` is what the consumer gets after the last one.
    package func finish(failure: TraceReadError?) {
        condition.lock()
        finished = true
        self.failure = failure
        condition.broadcast()
        condition.unlock()
    }

    /// Consumer side: the next item, nil at the end, or the producer's error.
    package func take() throws(TraceReadError) -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty, !finished { condition.wait() }
        if items.isEmpty {
            if let failure { throw failure }
            return nil
        }
        condition.signal()
        return items.removeFirst()
    }

    /// Consumer side: stop the producer.
    package func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }
}
