package import FencepostCore
import FencepostGeometry
package import FencepostStore
import Foundation

/// Options for one ingest run.
package struct IngestOptions: Sendable {
    package var monitor: MonitorSettings
    package var filter: FixFilterSettings
    /// The most fixes of an unsorted input held in memory; beyond, sorted runs spill to
    /// temporary files and merge back in time order.
    package var sortRunFixes: Int
    /// The most devices whose progress a session keeps between calls of
    /// ``IngestSession/ingest(batches:)``: beyond it the least recently used are forgotten, and
    /// read again from the store when they post next. Nil: every device is kept (a one-off
    /// ingest); a long-lived writer sets it, so its memory does not grow with every device ever
    /// seen.
    package var keptDevices: Int?
    /// A fix taken more than this many seconds before it is ingested is replayed (a phone's
    /// queue sent after it was offline): its events carry the flag `replayed`, so a consumer
    /// does not announce an arrival of an hour ago as news. Nil: no fix is (a file is history
    /// by nature); the live writer sets it.
    package var replayedAfter: Double?
    /// Seconds within which a device's reported enter and the server's are one enter
    /// (``StayMerge/window``).
    package var transitionWindow: Double = StayMerge.defaultWindow
    /// Whether accepted fixes are kept in the store's history (``FixHistory``), within its
    /// retention (``Store/historyDays()``); `ingest --no-history` turns it off.
    package var keepsHistory = true

    package init(
        monitor: MonitorSettings = MonitorSettings(), filter: FixFilterSettings = FixFilterSettings(),
        sortRunFixes: Int = 250_000, keptDevices: Int? = nil, replayedAfter: Double? = nil
    ) {
        self.monitor = monitor
        self.filter = filter
        self.sortRunFixes = sortRunFixes
        self.keptDevices = keptDevices
        self.replayedAfter = replayedAfter
    }
}

/// What one batch of ``IngestSession/ingest(batches:)`` did.
package struct BatchOutcome: Sendable {
    package var fixesAccepted = 0
    package var dropped: [FixDropReason: Int] = [:]
    /// The events the batch created, in the order they were written.
    package var events: [GeofenceEvent] = []
}

/// The store around the path every fix takes (``FixPipeline``: time order, filter, monitor):
/// devices' states loaded when they first come and saved after each input, events written with
/// their visit changes and outbox rows.
///
/// Each input (a file, a request) is one unit: its events, visit changes, outbox rows and the
/// devices' anchors and states commit in one transaction, so a malformed input writes nothing,
/// a crash loses nothing, and re-running converges (fixes at or before a device's anchor are
/// skipped). Events are written in batches, in a task of their own, while the session processes
/// the next fixes, in the same transaction (``IngestTransaction``, the session's only way to it).
///
/// Several sessions (processes, service instances) may ingest the same devices: a device's work
/// is serialised in the database (its lock, taken in the transaction), and the progress a
/// session keeps between inputs is used only while the stored state's version is the one it
/// last read or saved. One call at a time: a session is not shared between tasks.
package final class IngestSession {
    private let store: Store
    private let options: IngestOptions
    private var pipeline: FixPipeline
    /// The store's regions revision the pipeline's monitor was built from.
    private var regionsRevision: Int64
    /// Per device, its stored state's version as last read or saved (0: not stored): the
    /// progress the pipeline kept is used in a later input only while it is still this.
    private var storedVersion: [String: Int64] = [:]
    /// In the current transaction: each device's ``storedVersion`` before the transaction
    /// changed it, put back if it rolls back.
    private var storedVersionBefore: [String: Int64?] = [:]
    /// In the current transaction: the devices whose lock it holds, and their stored states as
    /// read under it (nil: none stored). Neither changes until the transaction saves them.
    private var lockedDevices: Set<String> = []
    private var storedStates: [String: StoredDeviceState?] = [:]
    /// While an input that can be read again is read the first time: a device's lock held
    /// elsewhere, after the input's first, ends the transaction (``DeviceLockedElsewhere``)
    /// instead of being waited for.
    private var refusesLaterLocks = false
    /// With ``IngestOptions/keptDevices``: when each kept device was last in a group of
    /// ``ingest(batches:)`` (a count of groups).
    private var lastUsed: [String: Int] = [:]
    private var groupsIngested = 0
    /// Written events are kept here while a batch of ``ingest(batches:)`` runs.
    private var collected: [GeofenceEvent]?
    /// While ``ingest(batches:)`` runs: the accepted fixes of its inputs so far, handed to the
    /// transaction once, after the last input, not once per input. A live group is many
    /// requests of a fix or two, and each hand-over of fixes costs the store a read and a write
    /// of the history's chunks: round trips on PostgreSQL, most of a group's, per request.
    private var groupHistory: HistoryBuffer?
    /// Whether the inputs of the running ``ingest(batches:)`` leave their fixes in
    /// ``groupHistory``.
    private var holdsGroupHistory = false
    /// While ``ingest(batches:)`` runs, where the store writes inputs together
    /// (``IngestTransaction/writesInputsTogether``): per input so far, its last events, not
    /// written yet. They are written for the whole group at once
    /// (``IngestTransaction/write(inputs:now:)``), after its last input or before an input's
    /// own batch of writes: a live group is many requests of a fix or two, and each write of
    /// events, visits and closes is a round trip on PostgreSQL.
    private var groupEvents: [[MonitorEvent]]?
    /// While ``ingest(batches:)`` runs: per input, its new events written with the group's.
    private var groupWritten: [[GeofenceEvent]] = []
    /// The summary of committed inputs, and of the current one while it is read.
    package private(set) var summary = IngestSummary()
    /// Events held before they are handed to the background writes (inside the input's
    /// transaction): small enough that writing overlaps monitoring from early in an input.
    private static let eventBatch = 1_000
    /// Whether accepted fixes are stored: ``IngestOptions/keepsHistory``, and a retention
    /// (``Store/historyDays()``, read when the session starts) other than 0.
    private let keepsHistory: Bool

    package init(store: Store, options: IngestOptions = IngestOptions()) async throws {
        self.store = store
        self.options = options
        let (regions, roster, revision) = try await store.monitoredRegionsAndRevision()
        self.pipeline = try Self.pipeline(regions: regions, roster: roster, options: options)
        self.regionsRevision = revision
        if options.keepsHistory {
            self.keepsHistory = try await store.historyDays() > 0
        } else {
            self.keepsHistory = false
        }
    }

    private static func pipeline(regions: [Region], roster: DeviceRoster, options: IngestOptions) throws
        -> FixPipeline
    {
        FixPipeline(
            monitor: try Monitor(regions: regions, roster: roster, settings: options.monitor), filter: options.filter,
            sortRunFixes: options.sortRunFixes)
    }

    package var regionCount: Int { pipeline.regionCount }

    /// Records readers' skipped-record counts.
    package func addSkipped(_ skipped: [String: Int]) {
        summary.skipped.merge(skipped, uniquingKeysWith: +)
    }

    /// The summary so far, which starts over (empty) after it: for a long-lived session that
    /// reports each input on its own. Its `devices` and `byDevice` hold the devices of the
    /// inputs since the last start.
    package func restartSummary() -> IngestSummary {
        defer { summary = IngestSummary() }
        return summary
    }

    // MARK: - Inputs

    /// Ingests one input (a file, a request) in one transaction: `next` gives its fixes one at
    /// a time, nil at the end. If `next` throws (a malformed file), nothing of the input is
    /// written and the error is rethrown. Events are written as they come, inside the
    /// transaction, so memory stays flat whatever the input's size.
    package func ingest(_ next: () throws -> Fix?) async throws {
        try await ingest(recording: nil, next)
    }

    /// Ingests `fixes` as one input, as ``ingest(_:)`` does.
    package func ingest(_ fixes: some Sequence<Fix>) async throws {
        var iterator = fixes.makeIterator()
        try await ingest { iterator.next() }
    }

    /// Ingests one input as ``ingest(_:)`` does, recording `file` (a whole file's content) in
    /// the same transaction: returns false, having read nothing, when the store already records
    /// a file with the same content, so each content is ingested at most once, whoever asks.
    @discardableResult
    package func ingest(recording file: ImportedFile?, _ next: () throws -> Fix?) async throws -> Bool {
        try await ingest(recording: file, lockingFirst: nil, next)
    }

    /// Ingests an input that can be read more than once (a file), as ``ingest(recording:_:)``
    /// does: `open` starts a reading of it. Its devices are locked as they come, the first
    /// waiting for another writer, the later ones only taken if free: taken out of any global
    /// order, they must not wait, or two fleet files naming the same devices in other orders
    /// would wait for each other in a circle. If one is held elsewhere, the transaction is
    /// rolled back (nothing written), the input is read once for its devices, and ingested
    /// again with all their locks taken first, in the order every writer uses, waiting.
    @discardableResult
    package func ingest(recording file: ImportedFile? = nil, rereading open: () throws -> () throws -> Fix?)
        async throws -> Bool
    {
        do {
            refusesLaterLocks = true
            defer { refusesLaterLocks = false }
            return try await ingest(recording: file, lockingFirst: nil, try open())
        } catch is DeviceLockedElsewhere {
            var devices = Set<String>()
            let next = try open()
            while let fix = try next() { devices.insert(fix.device) }
            return try await ingest(recording: file, lockingFirst: devices.sorted(), try open())
        }
    }

    /// ``ingest(recording:_:)``, with `devices` (sorted), when given, locked before anything
    /// else.
    private func ingest(recording file: ImportedFile?, lockingFirst devices: [String]?, _ next: () throws -> Fix?)
        async throws -> Bool
    {
        var isNew = true
        try await transaction { tx in
            if let file, try await !tx.record(file) {
                isNew = false
                return
            }
            if let devices {
                try await tx.lock(devices: devices)
                lockedDevices.formUnion(devices)
                try await readStoredStates(of: devices, tx: tx)
            }
            let tally = try await input(next, tx: tx)
            try await saveDevices(tally.devices, tx: tx)
        }
        return isNew
    }

    /// Ingests several inputs (requests, already parsed and validated) in one transaction:
    /// each is processed as ``ingest(_:)`` would, and the commit covers them all. Returns what
    /// each did; if anything fails, nothing of any of them is written.
    package func ingest(batches: [[Fix]]) async throws -> [BatchOutcome] {
        var outcomes: [BatchOutcome] = []
        var touched = Set<String>()
        try await transaction { tx in
            // The devices' locks in one order, before any is used: two instances taking groups
            // of the same devices never wait for each other in a circle. Then their stored
            // states at once: a database server is asked twice, not twice per device.
            let devices = Set(batches.lazy.flatMap { $0.lazy.map(\.device) }).sorted()
            try await tx.lock(devices: devices)
            lockedDevices.formUnion(devices)
            try await readStoredStates(of: devices, tx: tx)
            holdsGroupHistory = true
            groupEvents = tx.writesInputsTogether ? [] : nil
            groupWritten = Array(repeating: [], count: batches.count)
            defer {
                (holdsGroupHistory, groupHistory) = (false, nil)
                (groupEvents, groupWritten) = (nil, [])
            }
            for batch in batches {
                let before = summary
                collected = []
                defer { collected = nil }
                var fixes = batch.makeIterator()
                touched.formUnion(try await input({ fixes.next() }, tx: tx).devices)
                var outcome = BatchOutcome(
                    fixesAccepted: summary.fixesAccepted - before.fixesAccepted, events: collected ?? [])
                for (reason, count) in summary.dropped where count != before.dropped[reason] {
                    outcome.dropped[reason] = count - (before.dropped[reason] ?? 0)
                }
                outcomes.append(outcome)
            }
            try await writeGroupEvents(tx: tx)
            for index in outcomes.indices { outcomes[index].events += groupWritten[index] }
            if var history = groupHistory {
                groupHistory = nil
                try await tx.write([], keeping: history.take(), now: Timestamp.format(Date()))
                try await tx.awaitWrites()
            }
            try await saveDevices(touched, tx: tx)
        }
        if let limit = options.keptDevices { keepRecentDevices(touched, limit: limit) }
        return outcomes
    }

    /// Forgets the least recently used devices beyond `limit` (down to nine tenths of it, so
    /// the sort is paid once in many groups), and the per-device parts of the summary, which a
    /// long-lived writer does not read: its memory stays flat however many devices post.
    private func keepRecentDevices(_ touched: Set<String>, limit: Int) {
        groupsIngested += 1
        for device in touched { lastUsed[device] = groupsIngested }
        summary.devices.removeAll()
        summary.byDevice.removeAll()
        guard lastUsed.count > limit else { return }
        let excess = lastUsed.count - limit * 9 / 10
        for (device, _) in lastUsed.sorted(by: { $0.value < $1.value }).prefix(excess) {
            lastUsed[device] = nil
            storedVersion[device] = nil
            pipeline.forget(device)
        }
    }

    /// How many devices' progress the session keeps now.
    package var keptDeviceCount: Int { pipeline.deviceCount }

    /// Runs `body` in one write transaction and commits it, once no event writes are in flight.
    /// On failure, the devices' progress and the summary go back to what was committed: only
    /// the devices the transaction touched are kept for that, whatever number the session holds.
    private func transaction(_ body: (IngestTransaction) async throws -> Void) async throws {
        let (pipelineBefore, summary) = (pipeline, self.summary)
        pipeline.beginUndo()
        storedVersionBefore.removeAll(keepingCapacity: true)
        defer { storedVersionBefore.removeAll(keepingCapacity: true) }
        do {
            try await store.ingestTransaction(
                mergeWindow: options.transitionWindow, written: { [unowned self] written in self.count(written) }
            ) { tx in
                defer {
                    lockedDevices.removeAll()
                    storedStates.removeAll()
                }
                try await rebuildIfRegionsChanged(tx: tx)
                try await body(tx)
            }
            pipeline.commitUndo()
        } catch {
            if pipeline === pipelineBefore {
                pipeline.rollBack()
                for (device, version) in storedVersionBefore { storedVersion[device] = version }
            } else {
                // A pipeline rebuilt in the transaction (regions changed) starts with no device.
                pipeline.forgetAll()
                storedVersion.removeAll()
            }
            self.summary = summary
            throw error
        }
    }

    /// Sets a device's ``storedVersion``, keeping the one before for a rollback.
    private func setStoredVersion(_ version: Int64, of device: String) {
        if storedVersionBefore.index(forKey: device) == nil {
            storedVersionBefore[device] = .some(storedVersion[device])
        }
        storedVersion[device] = version
    }

    /// Rebuilds the monitor if regions changed since it was built (another process applied a
    /// plan), dropping every kept device state.
    private func rebuildIfRegionsChanged(tx: IngestTransaction) async throws {
        let revision = try await tx.regionsRevision()
        guard revision != regionsRevision else { return }
        pipeline = try Self.pipeline(
            regions: try await tx.monitoredRegions(), roster: try await tx.roster(), options: options)
        regionsRevision = revision
        storedVersion.removeAll()
    }

    /// One input through the pipeline, its events written as they come: each device is locked
    /// and its stored state read before its first fix is taken.
    private func input(_ next: () throws -> Fix?, tx: IngestTransaction) async throws -> FixPipeline.InputTally {
        var outcomes = Outcomes(replayedBefore: options.replayedAfter.map { Date().timeIntervalSince1970 - $0 })
        if keepsHistory {
            let monitor = pipeline.monitor
            outcomes.history = groupHistory ?? HistoryBuffer(privacy: monitor.hasPrivateRegions ? monitor : nil)
            groupHistory = nil
        }
        var run = InputRun(input: pipeline.startInput())
        let resume: FixPipeline.Resume = { [unowned self] device, kept in try self.resume(device, kept: kept) }
        // The fixes go through synchronously, a pause for each thing to await.
        do {
            while true {
                switch try run.takeFixes(next, isPrepared: isPrepared, resume: resume, into: &outcomes) {
                case .prepare(let device):
                    try await prepare(device, tx: tx)
                case .writeEvents:
                    // The group's events held so far go first: the store meets them in order.
                    try await writeGroupEvents(tx: tx)
                    try await tx.write(outcomes.pending, keeping: outcomes.takeRuns(), now: Timestamp.format(Date()))
                    outcomes.pending.removeAll(keepingCapacity: true)
                case .end:
                    if holdsGroupHistory {
                        // The group's fixes are written after its last input
                        // (``ingest(batches:)``), and its events too where they are held.
                        if groupEvents != nil {
                            groupEvents?.append(outcomes.pending)
                        } else {
                            try await tx.write(outcomes.pending, now: Timestamp.format(Date()))
                        }
                        groupHistory = outcomes.history
                    } else {
                        try await tx.write(
                            outcomes.pending, keeping: outcomes.takeRuns(), now: Timestamp.format(Date()))
                    }
                    try await tx.awaitWrites()
                    let tally = pipeline.end(&run.input)
                    summary.fixesRead += tally.fixes
                    summary.fixesAccepted += outcomes.accepted
                    summary.dropped.merge(outcomes.dropped, uniquingKeysWith: +)
                    for (device, counts) in tally.byDevice { summary.add(counts, device: device) }
                    return tally
                }
            }
        } catch {
            // The devices back from the input, for the transaction to undo what it did to them.
            pipeline.abandon(&run.input)
            throw error
        }
    }

    /// An input driven through the pipeline a fix at a time, stopping for what must be awaited.
    private struct InputRun {
        var input: FixPipeline.Input
        /// A settled fix whose device is being prepared: taken first when the run goes on.
        var held: Fix?
        var ended = false

        /// What the session awaits before the run goes on.
        enum Pause {
            /// Lock the device and read its stored state: its first fix is next.
            case prepare(String)
            /// Hand the pending events to the writes.
            case writeEvents
            /// Every fix is taken.
            case end
        }

        /// Reads, orders and takes fixes until something must be awaited.
        mutating func takeFixes(
            _ next: () throws -> Fix?, isPrepared: (String) -> Bool, resume: FixPipeline.Resume,
            into outcomes: inout Outcomes
        ) throws -> Pause {
            while true {
                let fix: Fix
                if let held {
                    fix = held
                    self.held = nil
                } else if let settled = try input.next() {
                    fix = settled
                } else if ended {
                    return .end
                } else if let read = try next() {
                    try input.add(read)
                    continue
                } else {
                    try input.finish()
                    ended = true
                    continue
                }
                if input.isFirst(of: fix.device), !isPrepared(fix.device) {
                    held = fix
                    return .prepare(fix.device)
                }
                try input.take(fix, resume: resume, into: &outcomes)
                if outcomes.pending.count >= IngestSession.eventBatch || outcomes.history?.isFull == true {
                    return .writeEvents
                }
            }
        }
    }

    /// Counts the pipeline's outcomes and holds its events for the writes.
    private struct Outcomes: FixOutcomes {
        var accepted = 0
        var dropped: [FixDropReason: Int] = [:]
        var pending: [MonitorEvent] = []

        /// Events of fixes taken before this time are flagged `replayed`.
        var replayedBefore: Double?
        /// The accepted fixes to keep; nil: none are kept.
        var history: HistoryBuffer?

        mutating func accepted(_ fix: Fix, events: [MonitorEvent]) {
            accepted += 1
            history?.add(fix)
            guard !events.isEmpty else { return }
            if let replayedBefore, fix.time < replayedBefore {
                for var event in events {
                    event.flags.insert(.replayed)
                    pending.append(event)
                }
            } else {
                pending.append(contentsOf: events)
            }
        }

        /// The runs of fixes held for the history, handed on with the pending events.
        mutating func takeRuns() -> [FixRun] {
            history?.take() ?? []
        }

        mutating func dropped(_ fix: Fix, reason: FixDropReason) {
            dropped[reason, default: 0] += 1
        }
    }

    // MARK: - Devices

    /// Before a device's first fix in an input: its lock, taken for the rest of the
    /// transaction, and its stored state, read under it.
    private func prepare(_ device: String, tx: IngestTransaction) async throws {
        if lockedDevices.insert(device).inserted {
            if lockedDevices.count == 1 || !refusesLaterLocks {
                try await tx.lock(devices: [device])
            } else if try await !tx.tryLock(device: device) {
                throw DeviceLockedElsewhere(device: device)
            }
        }
        if storedStates[device] == nil { try await readStoredStates(of: [device], tx: tx) }
    }

    /// Whether `device` is locked and its stored state read, in this transaction.
    private func isPrepared(_ device: String) -> Bool {
        storedStates.index(forKey: device) != nil
    }

    /// A device's progress at its first fix in an input (``prepare(_:tx:)`` done): what the
    /// session kept, while the stored state is still the version the session last read or
    /// saved; else the stored state.
    private func resume(_ device: String, kept: DeviceProgress?) throws -> DeviceProgress {
        summary.devices.insert(device)
        let stored = storedStates[device] ?? nil
        let version = stored?.version ?? 0
        if let kept, storedVersion[device] == version { return kept }
        setStoredVersion(version, of: device)
        let state = try stored?.state() ?? DeviceState()
        return DeviceProgress(
            filter: state.filter, track: pipeline.monitor.track(resuming: state.monitor, device: device),
            anchor: state.anchor)
    }

    /// Reads the stored states of `devices` (locked) into ``storedStates``.
    private func readStoredStates(of devices: [String], tx: IngestTransaction) async throws {
        let found = try await tx.storedStates(of: devices)
        for device in devices { storedStates[device] = .some(found[device]) }
    }

    /// Saves the anchors and states of the devices an input touched.
    private func saveDevices(_ devices: Set<String>, tx: IngestTransaction) async throws {
        let states = devices.sorted().compactMap { device -> (device: String, state: DeviceState)? in
            guard let progress = pipeline.progress(of: device) else { return nil }
            return (
                device,
                DeviceState(
                    anchor: progress.anchor, filter: progress.filter,
                    monitor: pipeline.monitor.state(of: progress.track))
            )
        }
        let saved = try await tx.save(states, now: Timestamp.format(Date()))
        for (device, version) in saved { setStoredVersion(version, of: device) }
    }

    // MARK: - Event writes

    /// Writes the events ``groupEvents`` holds, each input's new ones added to its
    /// ``groupWritten``.
    private func writeGroupEvents(tx: IngestTransaction) async throws {
        guard let inputs = groupEvents, inputs.contains(where: { !$0.isEmpty }) else { return }
        // The input running (if any) collects its own writes' events, not these.
        let running = collected
        collected = nil
        defer { collected = running }
        let written = try await tx.write(inputs: inputs, now: Timestamp.format(Date()))
        for (index, events) in written.enumerated() { groupWritten[index] += events }
        groupEvents = Array(repeating: [], count: inputs.count)
    }

    /// Counts what a batch of event writes did (``IngestTransaction`` reports each once it has
    /// been waited for).
    private func count(_ written: WrittenEvents) {
        collected?.append(contentsOf: written.newEvents)
        summary.events.merge(written.eventsByKind, uniquingKeysWith: +)
        summary.visitsOpened += written.visitsOpened
        summary.visitsClosed += written.visitsClosed
        summary.fixesKept += written.fixesKept
    }
}

/// Another writer holds the lock of a device an input met after its first, whose lock this
/// transaction could not wait for (see ``IngestSession/ingest(recording:rereading:)``).
struct DeviceLockedElsewhere: Error {
    var device: String
}
