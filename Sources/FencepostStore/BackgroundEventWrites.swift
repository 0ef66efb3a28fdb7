import Dispatch
import FencepostCore

/// Writes an ingest's events on a thread of its own, one batch at a time, while the session
/// goes on filtering and monitoring the next fixes: SQLite's work for the events overlaps the
/// monitor's, inside the same transaction.
///
/// The batch runs on the session's connection through ``EventWriter`` (SQLite's C API only, no
/// GRDB call). One rule keeps that safe: the connection has one user at a time. The session
/// starts a batch only after ``wait()`` and calls ``wait()`` before it touches the connection
/// again for anything (a device's state, the next batch, the commit) and before it lets an
/// error roll the transaction back.
final class BackgroundEventWrites: @unchecked Sendable {
    /// What a batch did.
    struct Written {
        /// The events that were new (and enqueued), in order.
        var newEvents: [GeofenceEvent] = []
        var eventsByKind: [EventKind: Int] = [:]
        var visitsOpened = 0
        var visitsClosed = 0
    }

    private let queue = DispatchQueue(label: "fencepost.event-writes")
    private let done = DispatchSemaphore(value: 0)
    // Set by the session before the batch starts, read by the batch's thread; the outcome the
    // other way round. The semaphore orders them.
    private var batch: (events: [MonitorEvent], writer: EventWriter)?
    private var outcome: Result<Written, any Error>?
    private var inFlight = false

    /// Starts writing `events` (their ids are worked out on the writes' thread too); the previous
    /// batch must have been waited for.
    func start(_ events: [MonitorEvent], writer: EventWriter) {
        precondition(!inFlight, "a batch of event writes is already running")
        batch = (events, writer)
        inFlight = true
        queue.async { [self] in
            let (events, writer) = batch!
            batch = nil
            outcome = Result { try Self.write(events, with: writer) }
            done.signal()
        }
    }

    /// Waits for the batch in flight, if any, and returns what it did or rethrows its error.
    func wait() throws -> Written? {
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

    private static func write(_ monitorEvents: [MonitorEvent], with writer: EventWriter) throws -> Written {
        var written = Written()
        let events = monitorEvents.map(GeofenceEvent.init)
        // Visits the batch both opens and closes are written once, closed.
        var exits: [String: Double] = [:]
        for event in events where event.kind == .exit { exits[event.visitID] = event.time }
        var closedEarly: Set<String> = []
        for event in events {
            if try writer.insert(event) { written.newEvents.append(event) }
            written.eventsByKind[event.kind, default: 0] += 1
            let change = VisitChange(for: event)
            switch change {
            case .open(let visit):
                if let exit = exits[visit.id] {
                    guard try writer.open(visit, closingAt: exit, reason: .exit) else { continue }
                    closedEarly.insert(visit.id)
                } else {
                    guard try writer.apply(change) else { continue }
                }
                written.visitsOpened += 1
            case .close(let id, _, _):
                if closedEarly.remove(id) != nil {
                    try writer.closedEarlier(id)
                } else {
                    guard try writer.apply(change) else { continue }
                }
                written.visitsClosed += 1
            case .none:
                break
            }
        }
        return written
    }
}
