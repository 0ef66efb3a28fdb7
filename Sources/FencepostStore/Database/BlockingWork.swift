import Dispatch

/// The one way blocking work (SQLite calls, `fdatasync`, file locks) leaves Swift's cooperative
/// pool, which has as many threads as cores (two on the machines this runs on): a task prefers a ``BlockingThreads``
/// executor for the call, its synchronous work runs on that executor's threads, and the task's
/// caller waits without holding a pool thread. `body` and what it captures never leave the
/// task, so they need not be Sendable.
package enum BlockingWork {
    /// Runs `body` on the store's shared threads (any number of transactions at once).
    package static func run<T>(_ body: () throws -> T) async throws -> T {
        try await withTaskExecutorPreference(BlockingThreads.shared) { try body() }
    }

    /// Runs `body` on `lane`, after what was given to it before (one at a time): one hop there
    /// and one back, the cheapest way for the short, frequent work lanes carry (a log sync per
    /// group commit).
    package static func run<T: Sendable>(on lane: BlockingThreads, _ body: @escaping @Sendable () throws -> T)
        async throws -> T
    {
        try await withCheckedThrowingContinuation { continuation in
            lane.queue.async { continuation.resume(with: Result(catching: body)) }
        }
    }
}

/// A task executor on threads of the store's own: the shared, concurrent one for transactions,
/// or a serial lane of its own for work that must never queue behind a transaction (the log's
/// syncs, its checkpoints, the live writer's groups: in the shared threads a checkpoint and a
/// group made every durable answer wait).
package final class BlockingThreads: TaskExecutor {
    /// Transactions, any number at once.
    package static let shared = BlockingThreads(label: "store", concurrent: true)
    fileprivate let queue: DispatchQueue

    /// A lane of its own: one job at a time, in order.
    package convenience init(lane label: String) {
        self.init(label: label, concurrent: false)
    }

    private init(label: String, concurrent: Bool) {
        queue = DispatchQueue(
            label: "fencepost.\(label)", qos: .userInitiated, attributes: concurrent ? .concurrent : [])
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
