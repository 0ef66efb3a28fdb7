import Dispatch

/// Blocking work (SQLite, `fdatasync`) on a thread of its own, awaited from async code: the live
/// writer, the log's syncs and the checkpoints each get one, so none of them waits for a free
/// thread behind the others (the shared blocking pool has as many threads as cores: two here,
/// and a checkpoint and a group in them made every durable answer wait).
struct DedicatedThread: Sendable {
    private let queue: DispatchQueue

    init(_ label: String) {
        queue = DispatchQueue(label: "fencepost.\(label)", qos: .userInitiated)
    }

    /// Runs `body` on the thread, after what was submitted before it.
    func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result(catching: body)) }
        }
    }
}
