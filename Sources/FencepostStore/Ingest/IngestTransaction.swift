import Dispatch
package import FencepostCore

/// An ingest's transaction: what the ingest pipeline (``FencepostIngest``'s session) needs of
/// the store, and nothing more: the monitored regions and their revision, the devices' locks,
/// their stored states read and saved, the events written (with their visit changes and outbox
/// rows), and the record of an imported file. Every other table and every SQL statement stay
/// behind it.
///
/// Event writes run on a thread of their own while the session goes on filtering and
/// monitoring the next fixes, so the database's work for the events overlaps the monitor's,
/// inside the same transaction. The connection has one user at a time, and this type is what
/// keeps it so: every method waits for the batch in flight before it touches the connection.
///
/// `@unchecked Sendable`: the batch's thread reads `batch` after the session set it and sets
/// `outcome` before the session reads it; `queue.async` and the semaphore order those accesses,
/// and everything else is touched by the session's thread only.
package final class IngestTransaction: @unchecked Sendable {
    private let tx: any SQLTransaction
    /// Told what each batch did, on the session's thread, once it has been waited for.
    private let written: (WrittenEvents) -> Void
    private let queue = DispatchQueue(label: "fencepost.event-writes")
    private let done = DispatchSemaphore(value: 0)
    private var batch: (events: [MonitorEvent], writer: any EventWriting)?
    private var outcome: Result<WrittenEvents, any Error>?
    private var inFlight = false
    /// Inside ``use(_:)``: no batch may start while its body has the transaction.
    private var inUse = false

    init(_ tx: any SQLTransaction, written: @escaping (WrittenEvents) -> Void) {
        self.tx = tx
        self.written = written
    }

    // MARK: - What the ingest asks

    /// The monitored regions' revision: it changes with every applied plan.
    package func regionsRevision() throws -> Int64 {
        try use { try Store.regionsRevision($0) }
    }

    /// The monitored regions (enabled ones), as the monitor is built from them.
    package func monitoredRegions() throws -> [Region] {
        try use { try Store.monitoredRegions($0).map(\.region) }
    }

    /// Takes the devices' locks, in the order given, until the transaction ends: another
    /// process (or instance) ingesting one of them waits.
    package func lock(devices: [String]) throws {
        guard !devices.isEmpty else { return }
        try use { tx in try tx.dialect.lock(devices.map { "device:" + $0 }, in: tx) }
    }

    /// The stored states of `devices` (whose locks this transaction holds), with each one's
    /// version; a device the store has no state for is absent. A few hundred a statement.
    package func storedStates(of devices: [String]) throws -> [String: StoredDeviceState] {
        try use { tx in
            var states: [String: StoredDeviceState] = [:]
            for start in stride(from: 0, to: devices.count, by: 500) {
                let chunk = devices[start..<min(start + 500, devices.count)]
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                for row in try tx.rows(
                    "SELECT device, state, version FROM devices WHERE device IN (\(marks))", chunk.map { .text($0) })
                {
                    states[row["device"]] = StoredDeviceState(text: row["state"], version: row["version"])
                }
            }
            return states
        }
    }

    /// Saves the devices' states, each one version newer; returns the new versions.
    @discardableResult
    package func save(_ states: [(device: String, state: DeviceState)], now: String) throws -> [String: Int64] {
        try use { try Store.save(states, now: now, tx: $0) }
    }

    /// Records `file` as imported; false (nothing written) when the store already records that
    /// content.
    package func record(_ file: ImportedFile) throws -> Bool {
        try use { try Store.record(file, in: $0) }
    }

    // MARK: - The connection

    /// Runs `body` on the transaction once the batch in flight, if any, is written (and
    /// reported): the only way to the connection besides the writes themselves.
    private func use<Value>(_ body: (any SQLTransaction) throws -> Value) throws -> Value {
        try awaitWrites()
        inUse = true
        defer { inUse = false }
        return try body(tx)
    }

    /// Starts writing `events` with their visit changes and outbox rows (their ids are worked
    /// out on the writes' thread too), once the batch before is written.
    package func write(_ events: [MonitorEvent], now: String) throws {
        guard !events.isEmpty else { return }
        precondition(!inUse, "event writes started while the transaction is in use")
        let writer = try use { try $0.eventWriter(now: now) }
        batch = (events, writer)
        inFlight = true
        queue.async { [self] in
            let (events, writer) = batch!
            batch = nil
            outcome = Result { try writer.write(events.map(GeofenceEvent.init)) }
            done.signal()
        }
    }

    /// Waits for the batch in flight, if any, and reports what it did; rethrows its error.
    package func awaitWrites() throws {
        guard let outcome = waitForBatch() else { return }
        written(try outcome.get())
    }

    /// Waits for the batch in flight and forgets it: the transaction is being abandoned, and
    /// the writes end before an error rolls it back.
    fileprivate func abandon() {
        _ = waitForBatch()
    }

    private func waitForBatch() -> Result<WrittenEvents, any Error>? {
        guard inFlight else { return nil }
        done.wait()
        inFlight = false
        defer { outcome = nil }
        return outcome
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
        written: @escaping (WrittenEvents) -> Void, _ body: (IngestTransaction) throws -> T
    ) async throws -> T {
        try await write { connection in
            let tx = IngestTransaction(connection, written: written)
            do {
                let result = try body(tx)
                try tx.awaitWrites()
                return result
            } catch {
                tx.abandon()
                throw error
            }
        }
    }
}
