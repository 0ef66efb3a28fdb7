import FencepostCore
import FencepostStore
import Foundation
import NIOPosix
import ServiceLifecycle

/// The one writer of live fixes: requests queue their (validated) batches, and the writer
/// takes everything queued, ingests it in one transaction off the async threads, and answers
/// each request with what its own batch did. Many small requests thus share one commit (group
/// commit), and every fix still goes filter → monitor → visit tracker → store, as `ingest` does.
///
/// A ServiceLifecycle service: on graceful shutdown it stops taking batches and finishes the
/// ones already queued before it returns.
final class LiveIngestor: Service, Sendable {
    private let queue = IngestQueue()
    private let session: SessionBox
    private let metrics: ServiceMetrics
    private let signal: ChangeSignal
    /// A group holds at most this many fixes (several requests' worth).
    private static let groupFixes = 20_000

    init(store: Store, options: IngestOptions, metrics: ServiceMetrics, signal: ChangeSignal) throws {
        var options = options
        options.reloadsDevices = true
        self.session = SessionBox(try IngestSession(store: store, options: options))
        self.metrics = metrics
        self.signal = signal
    }

    /// Ingests `fixes` (one request) and returns what they did, once committed.
    func ingest(_ fixes: [Fix]) async throws -> BatchOutcome {
        try await queue.submit(fixes)
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            while let group = await queue.take(maxFixes: Self.groupFixes) {
                await write(group)
            }
        } onGracefulShutdown: {
            Task { await self.queue.close() }
        }
    }

    private func write(_ group: [IngestQueue.Pending]) async {
        let batches = group.map(\.fixes)
        do {
            let session = self.session
            let outcomes = try await NIOThreadPool.singleton.runIfActive { try session.value.ingest(batches: batches) }
            for (pending, outcome) in zip(group, outcomes) {
                metrics.recordIngest(fixes: pending.fixes.count, outcome: outcome)
                pending.continuation.resume(returning: outcome)
            }
            if outcomes.contains(where: { !$0.events.isEmpty }) { signal.notify() }
        } catch {
            for pending in group { pending.continuation.resume(throwing: error) }
        }
    }
}

/// The session is used by the writer loop only, one group at a time, on a thread-pool thread.
private final class SessionBox: @unchecked Sendable {
    let value: IngestSession
    init(_ value: IngestSession) { self.value = value }
}

/// Batches waiting for the writer.
actor IngestQueue {
    struct Pending {
        var fixes: [Fix]
        var continuation: CheckedContinuation<BatchOutcome, any Error>
    }

    private var pending: [Pending] = []
    private var waiter: CheckedContinuation<Void, Never>?
    private var closed = false

    func submit(_ fixes: [Fix]) async throws -> BatchOutcome {
        guard !closed else { throw APIError(.serviceUnavailable, "shutting_down", "the service is shutting down; retry") }
        return try await withCheckedThrowingContinuation { continuation in
            pending.append(Pending(fixes: fixes, continuation: continuation))
            waiter?.resume()
            waiter = nil
        }
    }

    /// Waits for queued batches and takes them (at least one, then up to `maxFixes` fixes);
    /// nil once closed and drained.
    func take(maxFixes: Int) async -> [Pending]? {
        while pending.isEmpty {
            if closed { return nil }
            await withCheckedContinuation { waiter = $0 }
        }
        var count = 0
        var taken = 0
        for item in pending {
            if taken > 0, count + item.fixes.count > maxFixes { break }
            count += item.fixes.count
            taken += 1
        }
        let group = Array(pending.prefix(taken))
        pending.removeFirst(taken)
        return group
    }

    func close() {
        closed = true
        waiter?.resume()
        waiter = nil
    }
}
