public import FencepostCore
import FencepostFormats
import FencepostGeometry
import Foundation

/// Options for one ingest run.
public struct IngestOptions: Sendable {
    public var monitor: MonitorSettings
    public var filter: FixFilterSettings
    /// The most fixes of an unsorted input held in memory; beyond, sorted runs spill to
    /// temporary files and merge back in time order.
    public var sortRunFixes: Int

    public init(monitor: MonitorSettings = MonitorSettings(), filter: FixFilterSettings = FixFilterSettings(), sortRunFixes: Int = 250_000) {
        self.monitor = monitor
        self.filter = filter
        self.sortRunFixes = sortRunFixes
    }
}

/// What one batch of ``IngestSession/ingest(batches:)`` did.
public struct BatchOutcome: Sendable {
    public var fixesAccepted = 0
    public var dropped: [FixDropReason: Int] = [:]
    /// The events the batch created, in the order they were written.
    public var events: [GeofenceEvent] = []
}

/// The store around the path every fix takes (``FixPipeline``: time order, filter, monitor):
/// devices' states loaded when they first come and saved after each input, events written with
/// their visit changes and outbox rows.
///
/// Each input (a file, a request) is one unit: its events, visit changes, outbox rows and the
/// devices' anchors and states commit in one transaction, so a malformed input writes nothing,
/// a crash loses nothing, and re-running converges (fixes at or before a device's anchor are
/// skipped). Events are written in batches on a thread of their own (``BackgroundEventWrites``)
/// while the session processes the next fixes, in the same transaction.
///
/// Several sessions (processes, service instances) may ingest the same devices: a device's work
/// is serialised in the database (its lock, taken in the transaction), and the progress a
/// session keeps between inputs is used only while the stored state's version is the one it
/// last read or saved. One call at a time: a session is not shared between tasks.
public final class IngestSession {
    private let store: Store
    private let options: IngestOptions
    private var pipeline: FixPipeline
    /// The store's regions revision the pipeline's monitor was built from.
    private var regionsRevision: Int64
    /// Per device, its stored state's version as last read or saved (0: not stored): the
    /// progress the pipeline kept is used in a later input only while it is still this.
    private var storedVersion: [String: Int64] = [:]
    /// Written events are kept here while a batch of ``ingest(batches:)`` runs.
    private var collected: [GeofenceEvent]?
    /// The summary of committed inputs, and of the current one while it is read.
    public private(set) var summary = IngestSummary()
    /// Events held before they are handed to the background writes (inside the input's
    /// transaction): small enough that writing overlaps monitoring from early in an input.
    private static let eventBatch = 1_000
    /// The event writes in flight; see ``awaitWrites()`` for the rule that keeps them safe.
    private let writes = BackgroundEventWrites()

    public init(store: Store, options: IngestOptions = IngestOptions()) async throws {
        self.store = store
        self.options = options
        let (regions, revision) = try await store.read { tx in
            (try Store.monitoredRegions(tx).map(\.region), try Store.regionsRevision(tx))
        }
        self.pipeline = try Self.pipeline(regions: regions, options: options)
        self.regionsRevision = revision
    }

    private static func pipeline(regions: [Region], options: IngestOptions) throws -> FixPipeline {
        FixPipeline(monitor: try Monitor(regions: regions, settings: options.monitor), filter: options.filter, sortRunFixes: options.sortRunFixes)
    }

    public var regionCount: Int { pipeline.regionCount }

    /// Records readers' skipped-record counts.
    public func addSkipped(_ skipped: [String: Int]) {
        summary.skipped.merge(skipped, uniquingKeysWith: +)
    }

    // MARK: - Inputs

    /// Ingests one input (a file, a request) in one transaction: `read` hands each fix to `add`.
    /// If `read` throws (a malformed file), nothing of the input is written and the error is
    /// rethrown. Events are written as they come, inside the transaction, so memory stays flat
    /// whatever the input's size.
    public func ingest(_ read: (_ add: (Fix) throws -> Void) throws -> Void) async throws {
        try await transaction { tx in
            let tally = try input(read, tx: tx)
            try saveDevices(tally.devices, tx: tx)
        }
    }

    /// Ingests several inputs (requests, already parsed and validated) in one transaction:
    /// each is processed as ``ingest(_:)`` would, and the commit covers them all. Returns what
    /// each did; if anything fails, nothing of any of them is written.
    public func ingest(batches: [[Fix]]) async throws -> [BatchOutcome] {
        var outcomes: [BatchOutcome] = []
        try await transaction { tx in
            // The devices' locks in one order, before any is used: two instances taking groups
            // of the same devices never wait for each other in a circle.
            for device in Set(batches.lazy.flatMap { $0.lazy.map(\.device) }).sorted() {
                try tx.dialect.lock("device:" + device, in: tx)
            }
            var touched = Set<String>()
            for batch in batches {
                let before = summary
                collected = []
                defer { collected = nil }
                touched.formUnion(try input({ add in for fix in batch { try add(fix) } }, tx: tx).devices)
                var outcome = BatchOutcome(fixesAccepted: summary.fixesAccepted - before.fixesAccepted, events: collected ?? [])
                for (reason, count) in summary.dropped where count != before.dropped[reason] {
                    outcome.dropped[reason] = count - (before.dropped[reason] ?? 0)
                }
                outcomes.append(outcome)
            }
            try saveDevices(touched, tx: tx)
        }
        return outcomes
    }

    /// Runs `body` in one write transaction and commits it, once no event writes are in flight.
    /// On failure, the devices' progress and the summary go back to what was committed.
    private func transaction(_ body: (any SQLTransaction) throws -> Void) async throws {
        let (pipelineBefore, devices, summary, storedVersion) = (pipeline, pipeline.snapshot, self.summary, self.storedVersion)
        do {
            try await store.write { tx in
                do {
                    try rebuildIfRegionsChanged(tx: tx)
                    try body(tx)
                    try awaitWrites()
                } catch {
                    // The writes in flight end before the error rolls the transaction back.
                    writes.abandon()
                    throw error
                }
            }
        } catch {
            // A pipeline rebuilt in the transaction (regions changed) starts with no device.
            pipeline.restore(pipeline === pipelineBefore ? devices : FixPipeline.Devices())
            (self.summary, self.storedVersion) = (summary, storedVersion)
            throw error
        }
    }

    /// Rebuilds the monitor if regions changed since it was built (another process applied a
    /// plan), dropping every kept device state.
    private func rebuildIfRegionsChanged(tx: any SQLTransaction) throws {
        let revision = try Store.regionsRevision(tx)
        guard revision != regionsRevision else { return }
        pipeline = try Self.pipeline(regions: try Store.monitoredRegions(tx).map(\.region), options: options)
        regionsRevision = revision
        storedVersion.removeAll()
    }

    /// One input through the pipeline, its events written as they come.
    private func input(_ read: (_ add: (Fix) throws -> Void) throws -> Void, tx: any SQLTransaction) throws -> FixPipeline.InputTally {
        var outcomes = Outcomes(eventBatch: Self.eventBatch) { [unowned self] events in try self.write(events, tx: tx) }
        let tally = try pipeline.input(read, into: &outcomes) { [unowned self] device, kept in
            try self.resume(device, kept: kept, tx: tx)
        }
        try write(outcomes.pending, tx: tx)
        try awaitWrites()
        summary.fixesRead += tally.fixes
        summary.fixesAccepted += outcomes.accepted
        summary.dropped.merge(outcomes.dropped, uniquingKeysWith: +)
        return tally
    }

    /// Counts the pipeline's outcomes and hands its events to the writes in batches.
    private struct Outcomes: FixOutcomes {
        let eventBatch: Int
        let write: ([MonitorEvent]) throws -> Void
        var accepted = 0
        var dropped: [FixDropReason: Int] = [:]
        var pending: [MonitorEvent] = []

        init(eventBatch: Int, write: @escaping ([MonitorEvent]) throws -> Void) {
            self.eventBatch = eventBatch
            self.write = write
        }

        mutating func accepted(_ fix: Fix, events: [MonitorEvent]) throws {
            accepted += 1
            guard !events.isEmpty else { return }
            pending.append(contentsOf: events)
            if pending.count >= eventBatch {
                try write(pending)
                pending.removeAll(keepingCapacity: true)
            }
        }

        mutating func dropped(_ fix: Fix, reason: FixDropReason) {
            dropped[reason, default: 0] += 1
        }
    }

    // MARK: - Devices

    /// A device's progress at its first fix in an input, with the device's lock taken for the
    /// rest of the transaction: what the session kept, while the stored state is still the
    /// version the session last read or saved; else the stored state.
    private func resume(_ device: String, kept: DeviceProgress?, tx: any SQLTransaction) throws -> DeviceProgress {
        try awaitWrites()
        try tx.dialect.lock("device:" + device, in: tx)
        summary.devices.insert(device)
        let stored = try tx.row("SELECT state, version FROM devices WHERE device = ?", device)
        let version: Int64 = stored?["version"] ?? 0
        if let kept, storedVersion[device] == version { return kept }
        storedVersion[device] = version
        let state = try stored.map { try Store.decodeDeviceState($0["state"]) } ?? DeviceState()
        return DeviceProgress(filter: state.filter, track: pipeline.monitor.track(resuming: state.monitor), anchor: state.anchor)
    }

    /// Saves the anchors and states of the devices an input touched.
    private func saveDevices(_ devices: Set<String>, tx: any SQLTransaction) throws {
        try awaitWrites()
        let now = Timestamp.format(Date())
        for device in devices.sorted() {
            guard let progress = pipeline.progress(of: device) else { continue }
            let state = DeviceState(anchor: progress.anchor, filter: progress.filter, monitor: pipeline.monitor.state(of: progress.track))
            storedVersion[device] = try Store.save(device: device, state: state, now: now, tx: tx)
        }
    }

    // MARK: - Event writes

    /// Hands events to the background writes, which write them with their visit changes and
    /// outbox rows (inside the input's transaction) while processing goes on.
    private func write(_ events: [MonitorEvent], tx: any SQLTransaction) throws {
        guard !events.isEmpty else { return }
        try awaitWrites()
        writes.start(events, writer: try tx.eventWriter(now: Timestamp.format(Date())))
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
}
