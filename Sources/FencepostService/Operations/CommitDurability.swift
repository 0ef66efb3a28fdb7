import FencepostStore

/// Whether what the service answers is on disk: with a log to sync, a write is acknowledged
/// only after ``ensure()`` (one `fdatasync` of the store's write-ahead log, which covers every
/// commit before it); without one (`durable_commits: false`, or a store in memory), commits
/// survive the service crashing but not the machine.
struct CommitDurability: Sendable {
    let log: WriteAheadLog?
    private let thread = DedicatedThread("log-sync")

    init(log: WriteAheadLog?) {
        self.log = log
    }

    /// Returns once every commit made so far is on disk.
    func ensure() async throws {
        guard let log else { return }
        try await thread.run { try log.sync() }
    }
}
