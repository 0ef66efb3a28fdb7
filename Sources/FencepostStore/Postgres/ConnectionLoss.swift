import Foundation
import PostgresNIO
import Synchronization

/// A pooled connection's closing, heard once per connection (its close future), ending the wait
/// of the statement that was awaiting an answer on it: the driver may neither answer nor fail a
/// statement sent as the server goes away. Per statement this costs two uncontended locks, not
/// a timer.
///
/// `@unchecked Sendable`: `waiting` and `closed` are guarded by `lock`.
final class ConnectionLoss: @unchecked Sendable {
    /// What waits on a connection.
    protocol Waiter: AnyObject, Sendable {
        func connectionLost()
    }

    private let lock = NSLock()
    private var waiting: (any Waiter)?
    private var closed = false

    /// Every open connection's, by identity; removed when it closes.
    private static let all = Mutex<[ObjectIdentifier: ConnectionLoss]>([:])

    /// The connection's (made, and its closing listened to, the first time it is asked).
    static func of(_ connection: PostgresConnection) -> ConnectionLoss {
        let key = ObjectIdentifier(connection)
        let (loss, isNew) = all.withLock { all in
            // A closed one is an earlier connection's, at the same address.
            if let known = all[key], !known.isClosed { return (known, false) }
            let loss = ConnectionLoss()
            all[key] = loss
            return (loss, true)
        }
        if isNew {
            connection.closeFuture.whenComplete { _ in
                all.withLock { if $0[key] === loss { $0[key] = nil } }
                loss.close()
            }
        }
        return loss
    }

    /// `waiter` awaits an answer on the connection (one at a time); told at once if it is closed.
    func watch(_ waiter: any Waiter) {
        let closed = lock.withLock {
            if !self.closed { waiting = waiter }
            return self.closed
        }
        if closed { waiter.connectionLost() }
    }

    private var isClosed: Bool { lock.withLock { closed } }

    func unwatch(_ waiter: any Waiter) {
        lock.withLock {
            if waiting === waiter { waiting = nil }
        }
    }

    private func close() {
        let waiter = lock.withLock {
            closed = true
            defer { waiting = nil }
            return waiting
        }
        waiter?.connectionLost()
    }
}
