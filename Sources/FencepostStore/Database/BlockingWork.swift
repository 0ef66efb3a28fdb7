import Dispatch

/// The one way blocking work (SQLite calls, `fdatasync`, file locks) leaves Swift's cooperative
/// pool, which has as many threads as cores (two on the machines this runs on), while the
/// calling task waits without holding a pool thread: on the store's shared threads, or on a
/// ``BlockingLane`` of its own.
package enum BlockingWork {
    /// Runs `body` on the store's shared threads (any number of transactions at once): the task
    /// prefers their executor for the call, so `body` and what it captures never leave the task
    /// and need not be Sendable.
    package static func run<T>(_ body: () throws -> T) async throws -> T {
        try await withTaskExecutorPreference(StoreThreads.shared) { try body() }
    }

    /// Runs `body` on `lane`, after what was given to it before (one at a time): one hop there
    /// and one back, the cheapest way for the short, frequent work lanes carry (a log sync per
    /// group commit).
    package static func run<T: Sendable>(on lane: BlockingLane, _ body: @escaping @Sendable () throws -> T)
        async throws -> T
    {
        try await withCheckedThrowingContinuation { continuation in
            lane.queue.async { continuation.resume(with: Result(catching: body)) }
        }
    }
}

/// A thread of the store's own for work that must never queue behind a transaction (the log's
/// syncs, its checkpoints, the live writer's housekeeping: on the shared threads a checkpoint
/// and a group made every durable answer wait). One job at a time, in order.
package struct BlockingLane: Sendable {
    fileprivate let queue: DispatchQueue

    package init(_ label: String) {
        queue = DispatchQueue(label: "fencepost.\(label)", qos: .userInitiated)
    }
}

/// The task executor on the store's shared threads (a concurrent queue), for transactions.
final class StoreThreads: TaskExecutor {
    static let shared = StoreThreads()
    private let queue = DispatchQueue(label: "fencepost.store", qos: .userInitiated, attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
