import Foundation
import PostgresNIO

extension PostgresClient {
    /// `withConnection`, giving up with ``StoreUnavailable`` when no connection is leased within
    /// `deadline`. The pool waits for a connection as long as the server is away (it retries in
    /// the background), so without a deadline a request would hang for the whole outage rather
    /// than be answered 503. Once a connection is leased, `body` runs to its end: neither the
    /// deadline nor the task's cancellation cuts a transaction short (its caller would not know
    /// whether it committed); cancelled before the lease, it never starts.
    func withConnection<T>(
        leasedWithin deadline: Duration, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withoutActuallyEscaping(body) { body in
            // The group is awaited before this returns: `body` and its result never outlive the call.
            let work = UncheckedSendable(body)
            let lease = LeaseRace()
            return try await withThrowingTaskGroup(of: UncheckedSendable<T>?.self) { group in
                group.addTask {
                    try await self.withConnection { connection in
                        guard lease.take() else { throw CancellationError() }
                        return UncheckedSendable(try await work.value(connection))
                    }
                }
                group.addTask {
                    do {
                        try await Task.sleep(for: deadline)
                    } catch {
                        guard lease.expire() else { return nil }
                        throw CancellationError()
                    }
                    guard lease.expire() else { return nil }
                    throw StoreUnavailable(reason: "no connection to PostgreSQL within \(deadline) (is the server up?)")
                }
                defer { group.cancelAll() }
                while let finished = try await group.next() {
                    if let finished { return finished.value }
                }
                throw CancellationError()
            }
        }
    }
}

/// Who wins between a leased connection and the deadline: exactly one of them.
private final class LeaseRace: @unchecked Sendable {
    private let lock = NSLock()
    private var decided = false

    /// True when the connection came first (the work may start).
    func take() -> Bool { decide() }
    /// True when the deadline came first (the lease, when it comes, is given back unused).
    func expire() -> Bool { decide() }

    private func decide() -> Bool {
        lock.withLock {
            defer { decided = true }
            return !decided
        }
    }
}
