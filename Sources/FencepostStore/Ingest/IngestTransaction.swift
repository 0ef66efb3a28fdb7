package import FencepostCore
import Foundation

/// An ingest's transaction: what the ingest pipeline (``FencepostIngest``'s session) needs of
/// the store, and nothing more: the monitored regions and their revision, the devices' locks,
/// their stored states read and saved, the events written (with their visit changes and outbox
/// rows), and the record of an imported file. Every other table and every SQL statement stay
/// behind it.
///
/// Event writes run in a task of their own, on the store's threads, while the session goes on
/// filtering and monitoring the next fixes, so the database's work for the events overlaps the
/// monitor's, inside the same transaction; a small batch (a live request's fix or two) is
/// written at once instead, where handing it to another thread and back would cost more than
/// the writing. The connection has one user at a time, and this type is what keeps it so:
/// every method awaits the batch in flight before it touches the connection.
package final class IngestTransaction {
    private let tx: any SQLTransaction
    /// Told what each batch did, once it has been awaited.
    private let written: (WrittenEvents) -> Void
    private var inFlight: Batch?
    /// A batch being written by a task of its own, or one written at once, not yet reported.
    private enum Batch {
        case writing(Task<WrittenEvents, any Error>)
        case written(WrittenEvents)
    }
    /// Batches with fewer events and kept fixes than this are written at once.
    private static let writtenAtOnceBelow = 64
    /// Inside ``use(_:)``: no batch may start while its body has the transaction.
    private var inUse = false

    /// The stay merge's window (``StayMerge/window``), in seconds.
    private let mergeWindow: Double

    init(_ tx: any SQLTransaction, mergeWindow: Double, written: @escaping (WrittenEvents) -> Void) {
        self.tx = tx
        self.mergeWindow = mergeWindow
        self.written = written
    }

    // MARK: - What the ingest asks

    /// The monitored regions' revision: it changes with every applied plan.
    package func regionsRevision() async throws -> Int64 {
        try await use { try await Store.regionsRevision($0) }
    }

    /// The monitored regions (enabled ones), as the monitor is built from them.
    package func monitoredRegions() async throws -> [Region] {
        try await use { try await Store.regions($0) }
    }

    /// The roster, whose groups the regions' selectors name.
    package func roster() async throws -> DeviceRoster {
        try await use { try await Store.roster($0) }
    }

    /// Takes the devices' locks, in the order given, until the transaction ends: another
    /// process (or instance) ingesting one of them waits.
    package func lock(devices: [String]) async throws {
        guard !devices.isEmpty else { return }
        try await use { tx in try await tx.dialect.lock(devices.map { "device:" + $0 }, in: tx) }
    }

    /// Takes the device's lock if no other transaction holds it; false, taking nothing, if one
    /// does: for a lock taken out of the global order, which must not wait.
    package func tryLock(device: String) async throws -> Bool {
        try await use { tx in try await tx.dialect.tryLock("device:" + device, in: tx) }
    }

    /// The stored states of `devices` (whose locks this transaction holds), with each one's
    /// version; a device the store has no state for is absent. A few hundred a statement.
    package func storedStates(of devices: [String]) async throws -> [String: StoredDeviceState] {
        try await use { tx in
            var states: [String: StoredDeviceState] = [:]
            try await tx.forEachRow("SELECT device, state, version FROM devices WHERE device IN", in: devices) { row in
                states[row["device"]] = StoredDeviceState(text: row["state"], version: row["version"])
            }
            return states
        }
    }

    /// Saves the devices' states, each one version newer; returns the new versions.
    @discardableResult
    package func save(_ states: [(device: String, state: DeviceState)], now: String) async throws -> [String: Int64] {
        try await use { try await Store.save(states, now: now, tx: $0) }
    }

    /// Records `file` as imported; false (nothing written) when the store already records that
    /// content.
    package func record(_ file: ImportedFile) async throws -> Bool {
        try await use { try await Store.record(file, in: $0) }
    }

    // MARK: - The connection

    /// Runs `body` on the transaction once the batch in flight, if any, is written (and
    /// reported): the only way to the connection besides the writes themselves.
    private func use<Value>(_ body: (any SQLTransaction) async throws -> Value) async throws -> Value {
        try await awaitWrites()
        inUse = true
        defer { inUse = false }
        return try await body(tx)
    }

    /// Starts writing `events` with their visit changes and outbox rows (their ids are worked
    /// out in the writes' task too), and keeping `runs` of accepted fixes (``FixHistory``),
    /// once the batch before is written.
    package func write(_ events: [MonitorEvent], keeping runs: [FixRun] = [], now: String) async throws {
        guard !events.isEmpty || !runs.isEmpty else { return }
        precondition(!inUse, "event writes started while the transaction is in use")
        let writer = UncheckedSendable(try await use { try $0.eventWriter(now: now) })
        if events.count + runs.reduce(0, { $0 + $1.count }) < Self.writtenAtOnceBelow {
            // As the task below does, on this thread.
            var written =
                events.isEmpty ? WrittenEvents() : try await writer.value.write(events.map(GeofenceEvent.init))
            if !runs.isEmpty { written.fixesKept = try await writer.value.keep(runs) }
            inFlight = .written(written)
            return
        }
        // The writer is used by this task alone until it is awaited (``awaitWrites()``).
        inFlight = .writing(
            Task(executorPreference: StoreThreads.shared) {
                var written =
                    events.isEmpty ? WrittenEvents() : try await writer.value.write(events.map(GeofenceEvent.init))
                if !runs.isEmpty { written.fixesKept = try await writer.value.keep(runs) }
                return written
            })
    }

    /// Awaits the batch in flight, if any, merges the visits it touched where the device reports
    /// transitions too, and reports what it did; rethrows its error.
    package func awaitWrites() async throws {
        try await awaitWritten()
    }

    /// ``awaitWrites()``, returning the new events of the batch awaited (none without one).
    @discardableResult
    private func awaitWritten() async throws -> [GeofenceEvent] {
        guard let batch = inFlight else { return [] }
        inFlight = nil
        var done: WrittenEvents
        switch batch {
        case .writing(let task): done = try await task.value
        case .written(let written): done = written
        }
        try await mergeReportedStays(touchedBy: &done.newEvents)
        written(done)
        return done.newEvents
    }

    /// Whether the events of a group's inputs are best held and written together
    /// (``write(inputs:now:)``), or each input's as it ends (``write(_:keeping:now:)``).
    package var writesInputsTogether: Bool { tx.writesInputsTogether }

    /// Writes the events of several inputs (a live group's requests), in their order, as
    /// ``write(_:keeping:now:)`` and ``awaitWrites()`` for each input in turn do, and returns
    /// each input's new events. Where the writer is better called once
    /// (``writesInputsTogether``: on PostgreSQL each statement is a round trip), the inputs are
    /// written in one call, a set of statements for the group instead of one per input, and its
    /// new events handed back to the inputs they came from; what is stored, and
    /// in what order, is what the calls one after the other store (an enter and its exit in two
    /// inputs: opened then closed, or inserted closed, the same visit at version 2 with the same
    /// two outbox rows). Not in one call when an event id, an opened visit or a closed visit
    /// repeats (one statement meets the repeat at once, where calls in turn meet it stored), or
    /// when a device reports transitions in a region the events touch (the stay merge runs after
    /// each input's writes, and a later input's writes meet the visits it left). Reports what
    /// was written once, to the transaction's `written`.
    package func write(inputs: [[MonitorEvent]], now: String) async throws -> [[GeofenceEvent]] {
        try await awaitWrites()
        precondition(!inUse, "event writes started while the transaction is in use")
        var byInput = Array(repeating: [GeofenceEvent](), count: inputs.count)
        let writing = inputs.indices.filter { !inputs[$0].isEmpty }
        guard !writing.isEmpty else { return byInput }
        if tx.writesInputsTogether, writing.count > 1 {
            let events = inputs.map { $0.map(GeofenceEvent.init) }
            let all = Array(events.joined())
            if Self.repeatsNothing(all), try await reportedStays(touchedBy: all).isEmpty {
                let done = try await tx.eventWriter(now: now).write(all)
                var inputOf: [String: Int] = [:]
                for index in writing {
                    for event in events[index] { inputOf[event.id] = index }
                }
                for event in done.newEvents {
                    guard let index = inputOf[event.id] else { preconditionFailure("a new event of no input") }
                    byInput[index].append(event)
                }
                written(done)
                return byInput
            }
        }
        for index in writing {
            try await write(inputs[index], now: now)
            byInput[index] = try await awaitWritten()
        }
        return byInput
    }

    /// Whether no event id, no visit opened and no visit closed comes twice in `events`.
    private static func repeatsNothing(_ events: [GeofenceEvent]) -> Bool {
        var ids = Set<String>(minimumCapacity: events.count)
        var opened = Set<String>()
        var closed = Set<String>()
        for event in events {
            guard ids.insert(event.id).inserted else { return false }
            switch event.kind {
            case .enter: guard opened.insert(event.visitID).inserted else { return false }
            case .exit: guard closed.insert(event.visitID).inserted else { return false }
            case .dwell, .overstay, .absent, .overspeed: break
            }
        }
        return true
    }

    /// The devices and regions of `events` that the device has reported transitions for (the
    /// stay merge's, ``StayMerge``).
    private func reportedStays(touchedBy events: [GeofenceEvent]) async throws -> [DeviceRegion] {
        let touched = Set(
            events.lazy.filter { $0.kind != .absent }.map { DeviceRegion(device: $0.device, region: $0.regionID) })
        guard !touched.isEmpty else { return [] }
        var reported: [DeviceRegion] = []
        try await tx.forEachRow(
            "SELECT device, region FROM device_reported_regions WHERE device IN", in: Set(touched.map(\.device))
        ) { row in
            let pair = DeviceRegion(device: row["device"], region: row["region"])
            if touched.contains(pair) { reported.append(pair) }
        }
        return reported
    }

    /// The stay merge (``StayMerge``) for each device and region of `events` that the device has
    /// reported transitions for: the server's events join or close the visits its reports made.
    /// The events are told the visit the merge put them in.
    private func mergeReportedStays(touchedBy events: inout [GeofenceEvent]) async throws {
        let reported = try await reportedStays(touchedBy: events)
        guard !reported.isEmpty else { return }
        let now = Timestamp.format(Date())
        for pair in reported.sorted(by: { ($0.device, $0.region) < ($1.device, $1.region) }) {
            try await Store.mergeStays(device: pair.device, region: pair.region, window: mergeWindow, now: now, tx: tx)
        }
        let merged = Set(reported)
        let ids = events.filter { merged.contains(DeviceRegion(device: $0.device, region: $0.regionID)) }.map(\.id)
        var visits: [String: String] = [:]
        try await tx.forEachRow("SELECT id, visit_id FROM events WHERE id IN", in: ids) { row in
            if let visit: String = row["visit_id"] { visits[row["id"]] = visit }
        }
        for index in events.indices {
            if let visit = visits[events[index].id] { events[index].visitID = visit }
        }
    }

    /// Awaits the batch in flight and forgets it: the transaction is being abandoned, and
    /// the writes end before an error rolls it back.
    fileprivate func abandon() async {
        guard let batch = inFlight else { return }
        inFlight = nil
        if case .writing(let task) = batch { _ = try? await task.value }
    }
}

/// A device's state as stored, with the version it was saved at: a session that kept the
/// device's progress in memory uses it only while the stored version is the one it last saw,
/// and decodes the stored state only when it is not (a live device's every request would
/// otherwise decode it again, a tenth of a single-fix request's time).
package struct StoredDeviceState: Sendable {
    /// The state as stored (JSON).
    let text: String
    package var version: Int64

    /// The stored state, decoded.
    package func state() throws -> DeviceState {
        try Store.decodeDeviceState(text)
    }
}

extension Store {
    /// Runs `body` in one write transaction as an ingest's (``IngestTransaction``) and commits
    /// it once no event writes are in flight; `written` hears what each batch of event writes
    /// did. If `body` throws, the writes in flight end and everything is rolled back.
    package func ingestTransaction<T>(
        mergeWindow: Double = StayMerge.defaultWindow, written: @escaping (WrittenEvents) -> Void,
        _ body: (IngestTransaction) async throws -> T
    ) async throws -> T {
        try await write { connection in
            let tx = IngestTransaction(connection, mergeWindow: mergeWindow, written: written)
            do {
                let result = try await body(tx)
                try await tx.awaitWrites()
                return result
            } catch {
                await tx.abandon()
                throw error
            }
        }
    }
}
