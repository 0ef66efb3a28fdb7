import Foundation

/// Runs blocking work (waiting for a process, reading a pipe to its end, sleeping) on a thread
/// of its own and awaits its result. Swift Testing runs tests on the cooperative pool, which
/// has one thread per core (often two): a test blocking a pool thread starves every other test
/// that awaits, and tests bounded in time then fail for no fault of the code they test.
package func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
    }
}
