/// Items handed from tasks to one consumer task that takes, in one go, what has queued (a
/// batch): the live writer takes requests' batches, its answering loop takes committed groups.
/// Unbounded and never blocking a thread, unlike `BlockingQueue`, which is for threads.
package actor BatchingQueue<Item> {
    private var items: [Item] = []
    private var waiter: CheckedContinuation<Void, Never>?
    /// Once closed, producers are refused and the consumer drains what is left.
    private(set) var closed = false

    package init() {}

    package func append(_ new: [Item]) {
        items += new
        wake()
    }

    /// Waits for items and takes them: at least one, then more while their total `weight` stays
    /// within `limit`; nil once closed and drained.
    package func take(limit: Int = .max, weight: @Sendable (Item) -> Int = { _ in 1 }) async -> [Item]? {
        while items.isEmpty {
            if closed { return nil }
            await withCheckedContinuation { waiter = $0 }
        }
        var total = 0
        var taken = 0
        for item in items {
            if taken > 0, total + weight(item) > limit { break }
            total += weight(item)
            taken += 1
        }
        defer { items.removeFirst(taken) }
        return Array(items.prefix(taken))
    }

    package func close() {
        closed = true
        wake()
    }

    private func wake() {
        waiter?.resume()
        waiter = nil
    }
}
