import Dispatch

/// Work started on another thread now and waited for later: what lets a batch be read or
/// encoded across the cores (``ParallelMap``) while the caller fetches, scans or writes the
/// next one.
package final class BackgroundWork<Value: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is written by the working thread before it leaves `group`,
    // and read only after waiting for `group`.
    private var value: Value?
    private let group = DispatchGroup()

    package init(_ work: @escaping @Sendable () -> Value) {
        DispatchQueue.global().async(group: group) { self.value = work() }
    }

    /// The work's result, once it is done.
    package func wait() -> Value {
        group.wait()
        guard let value else { preconditionFailure("background work left no value") }
        return value
    }
}
