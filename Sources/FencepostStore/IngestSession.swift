public import FencepostCore
import FencepostFormats
import FencepostGeometry
import Foundation
import GRDB

/// Options for one ingest run.
public struct IngestOptions: Sendable {
    public var monitor: MonitorSettings
    public var filter: FixFilterSettings
    /// The most fixes of an unsorted input held in memory; beyond, sorted runs spill to
    /// temporary files and merge back in time order.
    public var sortRunFixes: Int
    /// Check each device's stored state at every input and reload it when another process
    /// changed it, rather than trusting what the session keeps between inputs: for a
    /// long-lived session (the HTTP service) while other processes may write.
    public var reloadsDevices: Bool

    public init(
        monitor: MonitorSettings = MonitorSettings(), filter: FixFilterSettings = FixFilterSettings(), sortRunFixes: Int = 250_000,
        reloadsDevices: Bool = false
    ) {
        self.monitor = monitor
        self.filter = filter
        self.sortRunFixes = sortRunFixes
        self.reloadsDevices = reloadsDevices
    }
}

/// What one batch of ``IngestSession/ingest(batches:)`` did.
public struct BatchOutcome: Sendable {
    public var fixesAccepted = 0
    public var dropped: [FixDropReason: Int] = [:]
    /// The events the batch created, in the order they were written.
    public var events: [GeofenceEvent] = []
}

/// The path every fix takes, from any input: filter → monitor → visit tracker → store.
///
/// Each input (a file, a request) is one unit: its events, visit changes, outbox rows and the
/// devices' anchors and states commit in one transaction, so a malformed input writes nothing,
/// a crash loses nothing, and re-running converges (fixes at or before a device's anchor are
/// skipped). Fixes of one input are processed in time order per device: an input that arrives
/// sorted streams through; one that does not is sorted first, in memory or, past
/// `sortRunFixes`, through temporary files. Events are written in batches on a thread of their
/// own (``BackgroundEventWrites``) while the session processes the next fixes, in the same
/// transaction. Not thread-safe: one session per ingest.
public final class IngestSession {
    private let store: Store
    private let options: IngestOptions
    private var monitor: Monitor
    /// The store's regions revision `monitor` was built from.
    private var regionsRevision: Int64
    private var devices: [String: DeviceRecord] = [:]
    private var pendingEvents: [GeofenceEvent] = []
    /// Written events are kept here while a batch of ``ingest(batches:)`` runs.
    private var collected: [GeofenceEvent]?
    /// The summary of committed inputs, and of the current one while it is read.
    public private(set) var summary = IngestSummary()
    private var committedSummary = IngestSummary()

    /// The input being read, put in time order per device.
    private var order: FixOrder
    /// Events held before they are handed to the background writes (inside the input's
    /// transaction): small enough that writing overlaps monitoring from early in an input.
    private static let eventBatch = 1_000
    /// The event writes in flight; see ``awaitWrites()`` for the rule that keeps them safe.
    private let writes = BackgroundEventWrites()

    /// A class: the per-fix path mutates it in place rather than copying its state.
    private final class DeviceRecord {
        var progress: DeviceProgress
        var inputGeneration: Int
        var dirty = false
        /// The state's JSON as last read or saved: with `reloadsDevices`, a record is reused in
        /// a later input only while the stored text is still exactly this (no other writer).
        var storedText: String?

        init(state: DeviceState, storedText: String?, monitor: Monitor, inputGeneration: Int) {
            self.progress = DeviceProgress(filter: state.filter, track: monitor.track(resuming: state.monitor), anchor: state.anchor)
            self.storedText = storedText
            self.inputGeneration = inputGeneration
        }

        func state(monitor: Monitor) -> DeviceState {
            DeviceState(anchor: progress.anchor, filter: progress.filter, monitor: monitor.state(of: progress.track))
        }
    }
    /// The device of the previous fix: most inputs hold one device.
    private var lastRecord: (device: String, record: DeviceRecord)?
    private var inputGeneration = 0

    public init(store: Store, options: IngestOptions = IngestOptions()) throws {
        self.store = store
        self.options = options
        self.order = FixOrder(runFixes: options.sortRunFixes)
        let (regions, revision) = try store.writer.read { db in
            (try Store.monitoredRegions(db).map(\.region), try Store.regionsRevision(db))
        }
        self.monitor = try Monitor(regions: regions, settings: options.monitor)
        self.regionsRevision = revision
    }

    public var regionCount: Int { monitor.regionCount }

    // MARK: - Inputs

    /// Ingests one input (a file, a request) in one transaction: `read` hands each fix to `add`.
    /// If `read` throws (a malformed file), nothing of the input is written and the error is
    /// rethrown. Events are written as they come, inside the transaction, so memory stays flat
    /// whatever the input's size.
    public func ingest(_ read: (_ add: (Fix) throws -> Void) throws -> Void) throws {
        try ingest(recording: nil, read)
    }

    /// Ingests one input as ``ingest(_:)`` does, recording `file` (a whole file's content) in
    /// the same transaction: returns false, having read nothing, when the store already records
    /// a file with the same content, so each content is ingested at most once, whoever asks.
    @discardableResult
    public func ingest(recording file: ImportedFile?, _ read: (_ add: (Fix) throws -> Void) throws -> Void) throws -> Bool {
        var isNew = true
        do {
            try store.writer.writeWithoutTransaction { db in
                // Immediate: take the write lock up front, so another process's commit cannot
                // invalidate this transaction's first reads (SQLITE_BUSY_SNAPSHOT).
                try db.inTransaction(.immediate) {
                    if let file, try Store.importedFile(sha256: file.sha256, db: db) != nil {
                        isNew = false
                        return .commit
                    }
                    try finishingWrites {
                        try beginInput(db: db)
                        try read { fix in try self.add(fix, db: db) }
                        try finishInput(db: db)
                        try saveDevices(db: db)
                    }
                    if let file { _ = try Store.record(file, db: db) }
                    return .commit
                }
            }
        } catch {
            abandonInput()
            throw error
        }
        if isNew { inputCommitted() }
        return isNew
    }

    /// Ingests several inputs (requests, already parsed and validated) in one transaction:
    /// each is processed as ``ingest(_:)`` would, and the commit covers them all. Returns what
    /// each did; if anything fails, nothing of any of them is written.
    public func ingest(batches: [[Fix]]) throws -> [BatchOutcome] {
        var outcomes: [BatchOutcome] = []
        do {
            try store.writer.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    try finishingWrites { try ingest(batches: batches, outcomes: &outcomes, db: db) }
                    return .commit
                }
            }
        } catch {
            collected = nil
            abandonInput()
            throw error
        }
        inputCommitted()
        return outcomes
    }

    /// The work of ``ingest(batches:)`` inside its transaction.
    private func ingest(batches: [[Fix]], outcomes: inout [BatchOutcome], db: Database) throws {
        try beginInput(db: db)
        for (index, batch) in batches.enumerated() {
            if index > 0 { startInput() }
            let before = summary
            collected = []
            for fix in batch { try add(fix, db: db) }
            try finishInput(db: db)
            var outcome = BatchOutcome(fixesAccepted: summary.fixesAccepted - before.fixesAccepted, events: collected ?? [])
            for (reason, count) in summary.dropped where count != before.dropped[reason] {
                outcome.dropped[reason] = count - (before.dropped[reason] ?? 0)
            }
            outcomes.append(outcome)
            collected = nil
        }
        try saveDevices(db: db)
    }

    /// Runs an input's work inside its transaction and returns only once no event writes are in
    /// flight: on success after they finished (their error is the input's), on error before
    /// the error rolls the transaction back.
    private func finishingWrites(_ body: () throws -> Void) throws {
        do {
            try body()
            try awaitWrites()
        } catch {
            writes.abandon()
            throw error
        }
    }

    /// Starts the next input; within one transaction, for each input of a group.
    private func startInput() {
        inputGeneration += 1
        order.reset()
    }

    /// The first step inside an input's transaction: rebuilds the monitor if regions changed
    /// since it was built (another process applied a plan), dropping every kept device state;
    /// with `reloadsDevices`, kept states are checked against the store as devices come up.
    private func beginInput(db: Database) throws {
        try awaitWrites()
        startInput()
        let revision = try Store.regionsRevision(db)
        if revision != regionsRevision {
            monitor = try Monitor(regions: try Store.monitoredRegions(db).map(\.region), settings: options.monitor)
            regionsRevision = revision
            devices.removeAll()
            lastRecord = nil
        } else if options.reloadsDevices {
            lastRecord = nil  // each record is checked against the store when first used
        }
    }

    /// Processes what the input left buffered and writes its remaining events.
    private func finishInput(db: Database) throws {
        try order.finish { fix in try process(fix, db: db) }
        try flushEvents(db: db)
        try awaitWrites()
    }

    private func inputCommitted() {
        for (device, record) in devices where record.dirty {
            summary.add(record.progress.tally, device: device)
            record.progress.tally = DeviceTally()
            record.dirty = false
        }
        committedSummary = summary
    }

    /// The summary so far, which starts over (empty) after it: for a long-lived session that
    /// reports each input on its own. Its `devices` holds the devices first loaded since the
    /// last start; `byDevice` every device of the inputs counted.
    public func restartSummary() -> IngestSummary {
        defer {
            summary = IngestSummary()
            committedSummary = summary
        }
        return summary
    }

    /// Records readers' skipped-record counts.
    public func addSkipped(_ skipped: [String: Int]) {
        summary.skipped.merge(skipped, uniquingKeysWith: +)
    }

    private func add(_ fix: Fix, db: Database) throws {
        summary.fixesRead += 1
        try order.add(fix) { fix in try process(fix, db: db) }
    }

    /// Forgets the in-memory effects of an input whose transaction was rolled back.
    private func abandonInput() {
        order.reset()
        pendingEvents.removeAll(keepingCapacity: true)
        // Devices this input touched reload their committed state when next seen.
        devices = devices.filter { !$0.value.dirty }
        lastRecord = nil
        summary = committedSummary
    }

    // MARK: - Processing

    private func process(_ fix: Fix, db: Database) throws {
        let record = try deviceRecord(fix.device, db: db)
        record.dirty = true
        if let reason = try monitor.take(fix, device: &record.progress, filter: options.filter, emit: { event in
            pendingEvents.append(GeofenceEvent(event))
        }) {
            summary.dropped[reason, default: 0] += 1
            return
        }
        summary.fixesAccepted += 1
        if pendingEvents.count >= Self.eventBatch { try flushEvents(db: db) }
    }

    private func deviceRecord(_ device: String, db: Database) throws -> DeviceRecord {
        let record: DeviceRecord
        if let last = lastRecord, last.device == device {
            record = last.record
        } else if let known = devices[device], try isCurrent(known, device: device, db: db) {
            record = known
        } else {
            try awaitWrites()
            let text = try Store.deviceStateText(device, db: db)
            record = DeviceRecord(
                state: try text.map(Store.decodeDeviceState) ?? DeviceState(), storedText: text, monitor: monitor,
                inputGeneration: inputGeneration)
            devices[device] = record
            summary.devices.insert(device)
        }
        if record.inputGeneration != inputGeneration {
            record.inputGeneration = inputGeneration
            record.progress.anchorAtStart = record.progress.anchor
        }
        lastRecord = (device, record)
        return record
    }

    /// Whether a record kept from an earlier input still holds the stored state: always when
    /// this session is the only writer; with `reloadsDevices` (other processes may ingest the
    /// same device), only while the stored text is the one this session last read or saved.
    private func isCurrent(_ record: DeviceRecord, device: String, db: Database) throws -> Bool {
        guard options.reloadsDevices, record.inputGeneration != inputGeneration else { return true }
        try awaitWrites()
        return try Store.deviceStateText(device, db: db) == record.storedText
    }

    /// Hands the events so far to the background writes, which write them with their visit
    /// changes and outbox rows (inside the input's transaction) while processing goes on.
    private func flushEvents(db: Database) throws {
        guard !pendingEvents.isEmpty else { return }
        try awaitWrites()
        writes.start(pendingEvents, writer: try EventWriter(now: Timestamp.format(Date()), db: db))
        pendingEvents = []
        pendingEvents.reserveCapacity(Self.eventBatch)
    }

    /// Waits for the event writes in flight and counts what they did. Every use of the
    /// connection other than the writes themselves comes after this: the connection has one
    /// user at a time.
    private func awaitWrites() throws {
        guard let written = try writes.wait() else { return }
        collected?.append(contentsOf: written.newEvents)
        summary.events.merge(written.eventsByKind, uniquingKeysWith: +)
        summary.visitsOpened += written.visitsOpened
        summary.visitsClosed += written.visitsClosed
    }

    /// Saves the anchors and states of the devices this input touched.
    private func saveDevices(db: Database) throws {
        try awaitWrites()
        let now = Timestamp.format(Date())
        for (device, record) in devices where record.dirty {
            record.storedText = try Store.save(device: device, state: record.state(monitor: monitor), now: now, db: db)
        }
    }
}
