package import FencepostCore
import Foundation

/// Writes an ingest's events with their visit changes and outbox rows, inside the transaction
/// it was made in: each backend's fast path. It may run on another thread than the one that
/// made it, while that one leaves the transaction alone.
package protocol EventWriting {
    /// Writes a batch of events in order: each new one (its id not stored yet) with its outbox
    /// row; an enter opens its visit, an exit closes it, each change with an outbox row of the
    /// visit's version (the row refers to the visit, see ``OutboxPayload``).
    func write(_ events: [GeofenceEvent]) async throws -> WrittenEvents

    /// Closes an open visit (its region retired); returns whether it was open.
    func close(visitID: String, at: Double, reason: VisitExitReason) async throws -> Bool

    /// Keeps accepted fixes (``FixHistory``); returns how many were stored.
    func keep(_ runs: [FixRun]) async throws -> Int
}

/// What a batch of event writes did.
package struct WrittenEvents {
    /// The events that were new (and enqueued), in order.
    package var newEvents: [GeofenceEvent] = []
    package var eventsByKind: [EventKind: Int] = [:]
    package var visitsOpened = 0
    package var visitsClosed = 0
    /// Accepted fixes stored in the history.
    package var fixesKept = 0
}

extension Store {
    /// Adds a mutation to the outbox (``OutboxRow``).
    static func enqueue(
        entity: SyncEntity, id: String, op: SyncOperation = .upsert, version: Int, key: String? = nil, payload: String?,
        now: String,
        tx: any SQLTransaction
    ) async throws {
        try await tx.enqueue(
            OutboxRow(entity: entity, id: id, op: op, version: version, key: key, payload: payload, createdAt: now))
    }

    // MARK: - Closing visits of retired regions

    /// Closes the open visits of a removed or changed region, at the device's last fix time,
    /// and forgets the devices' memberships (pending enters too) so the next fix re-evaluates.
    static func closeOpenVisits(regionID: String, reason: RegionRetirementReason, now: String, tx: any SQLTransaction)
        async throws
    {
        // Every device in or entering the region has it among its memberships: read those
        // states once, forget the membership, and keep the anchors for closing the visits.
        var anchors: [String: Double] = [:]
        var changed: [(device: String, state: DeviceState)] = []
        for row in try await tx.rows("SELECT device, state FROM devices WHERE state LIKE ?", "%\"\(regionID)\"%") {
            let device: String = row["device"]
            var state = try decodeDeviceState(row["state"])
            if let anchor = state.anchor { anchors[device] = anchor }
            guard state.monitor.memberships[regionID] != nil else { continue }  // the id matched elsewhere
            state.monitor.memberships[regionID] = nil
            changed.append((device, state))
        }
        try await save(changed, now: now, tx: tx)
        let visitReason: VisitExitReason = reason == .regionRemoved ? .regionRemoved : .regionChanged
        // Only visits of devices this store monitors itself (their fixes, or their reported
        // transitions): a visit that arrived by sync is closed by the store that monitors its
        // device, and arrives closed.
        let open = try await tx.rows(
            """
            SELECT * FROM visits WHERE region = ? AND status = 'open' AND (device IN (SELECT device FROM devices) OR device IN (SELECT device FROM device_reported_regions)) ORDER BY entered_ms, id
            """, regionID
        ).map(VisitRow.init)
        let writer = try tx.eventWriter(now: now)
        for visit in open {
            let at = max(anchors[visit.device] ?? visit.enteredMs.seconds, visit.enteredMs.seconds)
            _ = try await writer.close(visitID: visit.id, at: at, reason: visitReason)
        }
    }

    // MARK: - Device state

    static func deviceState(_ device: String, tx: any SQLTransaction) async throws -> DeviceState? {
        try await tx.value("SELECT state FROM devices WHERE device = ?", device).map(decodeDeviceState)
    }

    static func decodeDeviceState(_ text: String) throws -> DeviceState {
        try JSONDecoder().decode(DeviceState.self, from: Data(text.utf8))
    }

    /// Saves the devices' states, each one version newer, a few hundred per statement (one
    /// round trip to a database server, not one per device); returns the new versions. A new
    /// row starts at a random version, not 1: after a device is erased (its row deleted), a
    /// session that cached its old state must not find a new row at the version it cached.
    @discardableResult
    static func save(_ states: [(device: String, state: DeviceState)], now: String, tx: any SQLTransaction) async throws
        -> [String: Int64]
    {
        var versions: [String: Int64] = [:]
        for start in stride(from: 0, to: states.count, by: 500) {
            let chunk = states[start..<min(start + 500, states.count)]
            var arguments: [SQLValue] = []
            arguments.reserveCapacity(chunk.count * 5)
            // One draw from the system's generator per statement, not per device: each new row
            // still starts at a version of its own.
            let firstVersion = Self.firstStateVersion()
            for (offset, (device, state)) in chunk.enumerated() {
                arguments.append(.text(device))
                arguments.append(state.anchor.map(Timestamp.milliseconds).sqlValue)
                arguments.append(.text(state.storedText))
                arguments.append(.text(now))
                arguments.append(.integer(firstVersion + Int64(offset)))
            }
            let rows = try await tx.rows(
                """
                INSERT INTO devices (device, anchor_ms, state, updated_at, version) VALUES \(Array(repeating: "(?, ?, ?, ?, ?)", count: chunk.count).joined(separator: ", "))
                ON CONFLICT(device) DO UPDATE SET anchor_ms = excluded.anchor_ms, state = excluded.state,
                    updated_at = excluded.updated_at, version = devices.version + 1
                RETURNING device, version
                """, arguments)
            for row in rows { versions[row["device"]] = row["version"] as Int64 }
        }
        return versions
    }
}

extension Store {
    static func firstStateVersion() -> Int64 { Int64.random(in: 1...(Int64.max / 4)) }
}

extension Int64 {
    var seconds: Double { Double(self) / 1000 }
}
