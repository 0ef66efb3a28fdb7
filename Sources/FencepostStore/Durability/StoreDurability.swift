/// What a long-running writer (the service) asks of the store, whatever its backend, so that an
/// answered write is on disk, its commits never stop for housekeeping, and its log stays small.
///
/// On a SQLite file: commits are made without waiting for the disk, and ``commitsDurable()``
/// puts everything committed so far there with one `fdatasync` of the write-ahead log (group
/// commit: one sync for every group before it); ``afterCommit()`` starts an overgrown log over
/// between the writer's transactions; ``maintain(every:onError:)`` checkpoints the log from a
/// thread of its own (see ``WriteAheadLog``). In memory and on PostgreSQL (whose server looks
/// after its own log) there is nothing to do.
package final class StoreDurability: Sendable {
    private let log: WriteAheadLog?
    /// Whether answers wait for the disk (`durable_commits`).
    private let syncsCommits: Bool
    private let syncs = BlockingLane("log-sync")
    private let housekeeping = BlockingLane("live-writer")
    private let checkpoints = BlockingLane("checkpoint")

    init(log: WriteAheadLog?, syncsCommits: Bool) {
        self.log = log
        self.syncsCommits = syncsCommits
    }

    /// Returns once every commit made so far is on disk. With `durable_commits` off, commits
    /// survive the process crashing but not the machine, and this returns at once.
    package func commitsDurable() async throws {
        guard syncsCommits, let log else { return }
        try await BlockingWork.run(on: syncs) { try log.sync() }
    }

    /// For the store's one writer, between its transactions: keeps the log from growing without
    /// end. Returns whether it had something to do. A failure leaves the log longer until the
    /// next call tries again.
    ///
    /// The check goes to the housekeeping lane even when the log is small (nearly always),
    /// though it is an atomic read: the hop there and back is the pause in which the next
    /// group gathers. Answered at once (tried: live single-fix posts at 64 connections), the
    /// writer took smaller groups, a commit and a log sync for fewer requests each, and spent
    /// more CPU per request (OwnTracks 76–86 µs a request against 81–90, interleaved).
    @discardableResult
    package func afterCommit() async -> Bool {
        guard let log else { return false }
        return (try? await BlockingWork.run(on: housekeeping) { try log.restartIfLarge() }) ?? false
    }

    /// Checkpoints every `interval` until the task is cancelled, taking checkpoints over from
    /// the writer meanwhile (they are given back before it returns). Returns false at once when
    /// the store has nothing to maintain. A failed checkpoint is reported and tried again.
    package func maintain(every interval: Duration, onError: (any Error) -> Void) async throws -> Bool {
        guard let log else { return false }
        try log.startCheckpointing()
        defer {
            do { try log.stopCheckpointing() } catch { onError(error) }
        }
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            guard !Task.isCancelled else { break }  // stopping: the writer checkpoints last
            do {
                _ = try await BlockingWork.run(on: checkpoints) { try log.checkpoint() }
            } catch {
                onError(error)
            }
        }
        return true
    }
}

extension Store {
    /// The store's durability for a long-running writer; `syncsCommits` false trades surviving
    /// a power cut for faster answers.
    package func durability(syncsCommits: Bool) throws -> StoreDurability {
        StoreDurability(log: try WriteAheadLog.of(self), syncsCommits: syncsCommits)
    }
}
