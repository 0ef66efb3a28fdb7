import Dispatch
import FencepostCore

/// Writes an ingest's events on a thread of its own, one batch at a time, while the session
/// goes on filtering and monitoring the next fixes: the database's work for the events overlaps
/// the monitor's, inside the same transaction.
///
/// The batch runs on the session's connection through the backend's ``EventWriting``. One rule
/// keeps that safe: the connection has one user at a time. The session
/// starts a batch only after ``wait()`` and calls ``wait()`` before it touches the connection
/// again for anything (a device's state, the next batch, the commit) and before it lets an
/// error roll the transaction back.
final class BackgroundEventWrites: @unchecked Sendable {
    private let queue = DispatchQueue(label: "fencepost.event-writes")
    private let done = DispatchSemaphore(value: 0)
    // Set by the session before the batch starts, read by the batch's thread; the outcome the
    // other way round. The semaphore orders them.
    private var batch: (events: [MonitorEvent], writer: any EventWriting)?
    private var outcome: Result<WrittenEvents, any Error>?
    private var inFlight = false

    /// Starts writing `events` (their ids are worked out on the writes' thread too); the previous
    /// batch must have been waited for.
    func start(_ events: [MonitorEvent], writer: any EventWriting) {
        precondition(!inFlight, "a batch of event writes is already running")
        batch = (events, writer)
        inFlight = true
        queue.async { [self] in
            let (events, writer) = batch!
            batch = nil
            outcome = Result { try writer.write(events.map(GeofenceEvent.init)) }
            done.signal()
        }
    }

    /// Waits for the batch in flight, if any, and returns what it did or rethrows its error.
    func wait() throws -> WrittenEvents? {
        guard inFlight else { return nil }
        done.wait()
        inFlight = false
        defer { outcome = nil }
        return try outcome?.get()
    }

    /// Waits for the batch in flight and forgets it: the transaction is being abandoned.
    func abandon() {
        _ = try? wait()
    }
}
