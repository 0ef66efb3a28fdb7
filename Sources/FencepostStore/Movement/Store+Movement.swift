package import FencepostCore
import Foundation

/// Stops and trips as stored: derived from the stored fixes by each device's
/// ``MovementTracker``, whose state (and the time of the last fix it took) is kept in
/// `movement_state`, as a monitor's state is kept in `devices`. An open stop is a row with
/// status `open` whose end moves on with the device's fixes.
///
/// They are brought up to date from the history, not in the ingest's transaction: by the
/// service's periodic job, and by every read (``updateMovement(device:settings:)`` first), so an
/// ingest costs nothing more and a read never lags. Fixes that arrive later than the last one
/// taken (a phone's queue sent late) are in the history but not in the stops until
/// ``rebuildMovement(device:settings:)``.
extension Store {
    /// Stops and trips changed per transaction at most while catching up.
    static let movementBatch = 2_000

    /// Takes the device's stored fixes after the last one its tracker took; returns how many.
    @discardableResult
    package func updateMovement(device: String, settings: MovementSettings = MovementSettings()) async throws -> Int {
        let stored = try await read { tx in
            try await tx.rows("SELECT through_ms, state FROM movement_state WHERE device = ?", [.text(device)]).first
        }
        var tracker =
            try stored.map { try JSONDecoder().decode(MovementTracker.self, from: Data(($0["state"] as String).utf8)) }
            ?? MovementTracker(device: device)
        var through: Int64? = stored.map { $0["through_ms"] as Int64 }
        var taken = through
        var changes: [MovementTracker.Change] = []
        var fixes = 0
        var superseded = false
        func flush() async throws {
            guard taken != through, !superseded else { return }
            superseded = try await !saveMovement(
                device: device, changes: changes, tracker: tracker, from: through, to: taken ?? 0)
            through = taken
            changes.removeAll(keepingCapacity: true)
        }
        try await readTrack(device: device, since: through.map { Double($0 + 1) / 1000 }) { chunk in
            guard !superseded else { return }
            for fix in chunk {
                changes += tracker.add(FixPoint(fix), settings: settings)
                taken = Timestamp.milliseconds(fix.time)
                fixes += 1
            }
            if changes.count >= Self.movementBatch { try await flush() }
        }
        try await flush()
        return superseded ? 0 : fixes
    }

    /// ``updateMovement(device:settings:)`` for `device`, or (nil) for every device with stored
    /// fixes: what a read does first.
    package func updateMovement(of device: String?, rebuilding: Bool = false) async throws {
        var devices = [String]()
        if let device { devices = [device] } else { devices = try await historyDevices() }
        for device in devices {
            if rebuilding {
                try await rebuildMovement(device: device)
            } else {
                try await updateMovement(device: device)
            }
        }
    }

    /// Forgets the device's stops, trips and tracker, and finds them again from all its stored
    /// fixes (after a change of settings, or fixes that came late).
    @discardableResult
    package func rebuildMovement(device: String, settings: MovementSettings = MovementSettings()) async throws -> Int {
        try await write { tx in
            try await tx.dialect.lock("movement:" + device, in: tx)
            for table in ["stops", "trips", "movement_state"] {
                try await tx.execute("DELETE FROM \(table) WHERE device = ?", device)
            }
        }
        return try await updateMovement(device: device, settings: settings)
    }

    /// Writes what the tracker found since `from` and its state as of `to`, unless another
    /// updater has moved the device's state on meanwhile (then nothing, and false).
    private func saveMovement(
        device: String, changes: [MovementTracker.Change], tracker: MovementTracker, from: Int64?, to: Int64
    ) async throws -> Bool {
        let state = String(decoding: try JSONEncoder().encode(tracker), as: UTF8.self)
        return try await write { tx in
            try await tx.dialect.lock("movement:" + device, in: tx)
            let current: Int64? = try await tx.value(
                "SELECT through_ms FROM movement_state WHERE device = ?", device)
            guard current == from else { return false }
            for change in changes {
                switch change {
                case .stopOpened(let stop), .stopClosed(let stop): try await Self.upsert(stop, tx: tx)
                case .trip(let trip): try await Self.upsert(trip, tx: tx)
                }
            }
            if let open = tracker.openStop { try await Self.upsert(open, tx: tx) }
            try await tx.execute(
                """
                INSERT INTO movement_state (device, through_ms, state, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (device) DO UPDATE SET through_ms = excluded.through_ms, state = excluded.state,
                    updated_at = excluded.updated_at
                """, device, to, state, Timestamp.format(Date()))
            return true
        }
    }

    private static func upsert(_ stop: Stop, tx: any SQLTransaction) async throws {
        try await tx.execute(
            """
            INSERT INTO stops (id, device, start_ms, end_ms, lat, lon, fixes, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET end_ms = excluded.end_ms, lat = excluded.lat, lon = excluded.lon,
                fixes = excluded.fixes, status = excluded.status
            """,
            [
                .text(stop.id), .text(stop.device), .integer(Timestamp.milliseconds(stop.start)),
                .integer(Timestamp.milliseconds(stop.end)), .double(stop.lat), .double(stop.lon),
                .integer(Int64(stop.fixes)), .text(stop.isOpen ? "open" : "closed"),
            ])
    }

    private static func upsert(_ trip: Trip, tx: any SQLTransaction) async throws {
        let fromStop: SQLValue = trip.fromStop.map { .text($0.id) } ?? .null
        let toStop: SQLValue = trip.toStop.map { .text($0.id) } ?? .null
        let values: [SQLValue] = [
            .text(trip.id), .text(trip.device), .integer(Timestamp.milliseconds(trip.start)),
            .integer(Timestamp.milliseconds(trip.end)), .double(trip.distance), .double(trip.maxSpeed),
            .integer(Int64(trip.fixes)), fromStop, toStop, .double(trip.startLat), .double(trip.startLon),
            .double(trip.endLat), .double(trip.endLon),
        ]
        try await tx.execute(
            """
            INSERT INTO trips (id, device, start_ms, end_ms, distance, max_speed, fixes, from_stop, to_stop,
                start_lat, start_lon, end_lat, end_lon) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET end_ms = excluded.end_ms, distance = excluded.distance,
                max_speed = excluded.max_speed, fixes = excluded.fixes, from_stop = excluded.from_stop,
                to_stop = excluded.to_stop, end_lat = excluded.end_lat, end_lon = excluded.end_lon
            """, values)
    }
}
