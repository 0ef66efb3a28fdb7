import Dispatch
import FencepostCore

/// An ingest's transaction, shared by the session and the event writes: each batch of events
/// is written on a thread of its own while the session goes on filtering and monitoring the
/// next fixes, so the database's work for the events overlaps the monitor's, inside the same
/// transaction.
///
/// The connection has one user at a time, and this type is what keeps it so: the transaction
/// is reachable only through ``use(_:)`` and ``write(_:now:)``, and both wait for the batch in
/// flight before they touch it. Whoever holds an `IngestTransaction` cannot reach the
/// connection while a batch runs on it.
///
/// `@unchecked Sendable`: the batch's thread reads `batch` after the session set it and sets
/// `outcome` before the session reads it; `queue.async` and the semaphore order those accesses,
/// and everything else is touched by the session's thread only.
final class IngestTransaction: @unchecked Sendable {
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

    /// Runs `body` on the transaction once the batch in flight, if any, is written (and
    /// reported): the only way to the connection besides the writes themselves.
    func use<Value>(_ body: (any SQLTransaction) throws -> Value) throws -> Value {
        try awaitWrites()
        inUse = true
        defer { inUse = false }
        return try body(tx)
    }

    /// Starts writing `events` with their visit changes and outbox rows (their ids are worked
    /// out on the writes' thread too), once the batch before is written.
    func write(_ events: [MonitorEvent], now: String) throws {
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
    func awaitWrites() throws {
        guard let outcome = waitForBatch() else { return }
        written(try outcome.get())
    }

    /// Waits for the batch in flight and forgets it: the transaction is being abandoned, and
    /// the writes end before an error rolls it back.
    func abandon() {
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
