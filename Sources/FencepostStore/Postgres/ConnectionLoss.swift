import PostgresNIO
import Synchronization

/// A pooled connection's closing, heard once per connection (its close future), ending the wait
/// of the statement that was awaiting an answer on it: the driver may neither answer nor fail a
/// statement sent as the server goes away. Per statement this costs two uncontended locks, not
/// a timer.
final class ConnectionLoss: Sendable {
    /// What waits on a connection.
    protocol Waiter: AnyObject, Sendable {
        func connectionLost()
    }

    /// The statement awaiting an answer, and whether the connection closed.
    private let state = Mutex<(waiting: (any Waiter)?, closed: Bool)>((nil, false))

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
        let closed = state.withLock { state in
            if !state.closed { state.waiting = waiter }
            return state.closed
        }
        if closed { waiter.connectionLost() }
    }

    private var isClosed: Bool { state.withLock { $0.closed } }

    func unwatch(_ waiter: any Waiter) {
        state.withLock { state in
            if state.waiting === waiter { state.waiting = nil }
        }
    }

    private func close() {
        let waiter = state.withLock { state in
            state.closed = true
            defer { state.waiting = nil }
            return state.waiting
        }
        waiter?.connectionLost()
    }
}
