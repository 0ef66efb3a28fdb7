import Foundation
import Synchronization

/// Wakes whoever waits for new events (live streams, webhook delivery) when the service
/// commits some. Waiters also poll, so writes by other processes reach them too.
final class ChangeSignal: Sendable {
    private let waiters = Mutex<[UUID: AsyncStream<Void>.Continuation]>([:])

    /// Wakes every current waiter.
    func notify() {
        for waiter in waiters.withLock({ Array($0.values) }) { waiter.yield() }
    }

    /// Returns at the next `notify()`, after `timeout`, or when the task is cancelled.
    func wait(timeout: Duration) async {
        let id = UUID()
        // Registered before waiting, so a notify between here and the wait is not missed.
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        waiters.withLock { $0[id] = continuation }
        defer { _ = waiters.withLock { $0.removeValue(forKey: id) } }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in stream { return } }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }
}
