import Foundation

/// Runs an async body to its end on the calling thread, for a SQLite transaction: GRDB hands
/// the connection to a synchronous closure on its writer's queue, and only that closure's
/// thread may use it. The body's task prefers this executor, whose jobs the calling thread runs
/// as they come, sleeping in between (while the body waits for the ingest's event writes, say).
/// The store's SQL never suspends on SQLite, so most transactions run in one job.
///
/// `@unchecked Sendable`: `jobs` and `finished` are guarded by `condition`.
final class CallingThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs `body` on this thread, from its first job to its last, and returns what it returned.
    static func run<T>(_ body: () async throws -> T) throws -> T {
        let executor = CallingThreadExecutor()
        return try withoutActuallyEscaping(body) { body in
            // The body is dropped inside the task, before it ends, so that it has not escaped
            // when this returns; the task is over before then (``runJobs()`` waits for it).
            let work = Work(body)
            Task(executorPreference: executor) {
                let result: Result<T, any Error>
                do {
                    result = .success(try await work.take()())
                } catch {
                    result = .failure(error)
                }
                work.result = result
                executor.finish()
            }
            executor.runJobs()
            return try work.result!.get()
        }
    }

    /// Runs jobs as they come until ``finish()``.
    private func runJobs() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job.runSynchronously(on: executor) }
        }
    }

    private func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    /// The body and its result, between this thread and the task (which this thread waits for).
    private final class Work<T>: @unchecked Sendable {
        private var body: (() async throws -> T)?
        var result: Result<T, any Error>?

        init(_ body: @escaping () async throws -> T) {
            self.body = body
        }

        func take() -> () async throws -> T {
            defer { body = nil }
            return body!
        }
    }
}
