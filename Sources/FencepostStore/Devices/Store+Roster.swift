package import FencepostCore
package import Foundation

/// What applying a roster changes: devices added, updated (name or groups) and removed.
package struct RosterPlan: Sendable, Equatable {
    package var added: [DeviceRoster.Entry] = []
    package var updated: [(before: DeviceRoster.Entry, after: DeviceRoster.Entry)] = []
    package var removed: [DeviceRoster.Entry] = []
    package var unchanged = 0
    /// Groups whose geofence budget changes, by name: before and after (empty: none).
    package var groupBudgets: [(group: String, before: GeofenceBudget, after: GeofenceBudget)] = []

    package var isEmpty: Bool { added.isEmpty && updated.isEmpty && removed.isEmpty && groupBudgets.isEmpty }

    package init(desired: DeviceRoster, stored: DeviceRoster) {
        for group in Set(desired.groupBudgets.keys).union(stored.groupBudgets.keys).sorted() {
            let (before, after) = (
                stored.groupBudgets[group] ?? GeofenceBudget(), desired.groupBudgets[group] ?? GeofenceBudget()
            )
            if before != after { groupBudgets.append((group, before, after)) }
        }
        for entry in desired.sorted {
            if let before = stored.entries[entry.device] {
                if before == entry { unchanged += 1 } else { updated.append((before, entry)) }
            } else {
                added.append(entry)
            }
        }
        removed = stored.sorted.filter { desired.entries[$0.device] == nil }
    }

    package static func == (lhs: RosterPlan, rhs: RosterPlan) -> Bool {
        lhs.added == rhs.added && lhs.removed == rhs.removed && lhs.unchanged == rhs.unchanged
            && lhs.updated.map(\.after) == rhs.updated.map(\.after)
            && lhs.groupBudgets.map(\.group) == rhs.groupBudgets.map(\.group)
            && lhs.groupBudgets.map(\.after) == rhs.groupBudgets.map(\.after)
    }
}

extension Store {
    /// The roster as stored.
    package func roster() async throws -> DeviceRoster {
        try await read(Self.roster)
    }

    static func roster(_ tx: any SQLTransaction) async throws -> DeviceRoster {
        let entries = try await tx.rows(
            "SELECT device, name, groups, geofence_budget, platform FROM roster ORDER BY device"
        ).map { row in
            let groups = try JSONDecoder().decode([String].self, from: Data((row["groups"] as String).utf8))
            return DeviceRoster.Entry(
                device: row["device"], name: row["name"], groups: groups,
                budget: GeofenceBudget(count: row["geofence_budget"], platform: row["platform"]))
        }
        var groupBudgets: [String: GeofenceBudget] = [:]
        for row in try await tx.rows("SELECT name, geofence_budget, platform FROM roster_groups") {
            groupBudgets[row["name"]] = GeofenceBudget(count: row["geofence_budget"], platform: row["platform"])
        }
        return DeviceRoster(entries, groupBudgets: groupBudgets)
    }

    /// The diff between `desired` and the stored roster; changes nothing.
    package func planRoster(_ desired: DeviceRoster) async throws -> RosterPlan {
        RosterPlan(desired: desired, stored: try await roster())
    }

    /// Makes the stored roster equal `desired` in one transaction: a device that leaves a group
    /// has its open visits in regions that no longer apply to it closed (`region_unassigned`) in
    /// the same transaction, and monitors everywhere rebuild (the regions revision grows).
    @discardableResult
    package func applyRoster(_ desired: DeviceRoster, at now: Date = Date()) async throws -> RosterPlan {
        try await editRoster(at: now) { _ in desired }
    }

    /// Applies the roster `edit` makes of the stored one, read and written in one transaction
    /// (as ``applyRoster(_:at:)``): concurrent single-device edits cannot undo each other.
    @discardableResult
    package func editRoster(at now: Date = Date(), _ edit: (DeviceRoster) throws -> DeviceRoster) async throws
        -> RosterPlan
    {
        let timestamp = Timestamp.format(now)
        return try await write { tx in
            // The same lock as a region apply: what applies to whom changes under one of them at a time.
            try await tx.dialect.lock("regions", in: tx)
            let stored = try await Self.roster(tx)
            let plan = RosterPlan(desired: try edit(stored), stored: stored)
            guard !plan.isEmpty else { return plan }
            for entry in plan.removed { try await tx.execute("DELETE FROM roster WHERE device = ?", entry.device) }
            for entry in plan.added + plan.updated.map(\.after) {
                let groups = String(decoding: try JSONEncoder().encode(entry.groups), as: UTF8.self)
                try await tx.execute(
                    """
                    INSERT INTO roster (device, name, groups, geofence_budget, platform, updated_at) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT(device) DO UPDATE SET name = excluded.name, groups = excluded.groups,
                        geofence_budget = excluded.geofence_budget, platform = excluded.platform,
                        updated_at = excluded.updated_at
                    """, entry.device, entry.name, groups, entry.budget.count, entry.budget.platform, timestamp)
            }
            for change in plan.groupBudgets {
                try await tx.execute("DELETE FROM roster_groups WHERE name = ?", change.group)
                guard !change.after.isEmpty else { continue }
                try await tx.execute(
                    "INSERT INTO roster_groups (name, geofence_budget, platform, updated_at) VALUES (?, ?, ?, ?)",
                    change.group, change.after.count, change.after.platform, timestamp)
            }
            try await Self.bumpRegionsRevision(tx)
            try await Self.closeUnassignedVisits(now: timestamp, tx: tx)
            return plan
        }
    }

    /// Closes the open visits in regions that no longer apply to their device (its selectors,
    /// or the device's groups, changed), at the device's last fix time, and forgets those
    /// memberships so they are not followed again.
    static func closeUnassignedVisits(now: String, tx: any SQLTransaction) async throws {
        let selective = try await monitoredRegions(tx).map(\.region).filter { !$0.audience.isEveryone }
        guard !selective.isEmpty else { return }
        let roster = try await roster(tx)
        let byID = Dictionary(uniqueKeysWithValues: selective.map { ($0.id, $0) })
        let marks = Array(repeating: "?", count: selective.count).joined(separator: ", ")
        // Only visits of devices this store monitors itself, by fixes or reports (as for
        // retired regions).
        let unassigned = try await tx.rows(
            """
            SELECT * FROM visits WHERE status = 'open' AND region IN (\(marks)) AND (device IN (SELECT device FROM devices) OR device IN (SELECT device FROM device_reported_regions))
            ORDER BY entered_ms, id
            """, selective.map { .text($0.id) }
        ).map(VisitRow.init).filter { visit in byID[visit.region].map { !roster.applies($0, to: visit.device) } ?? false
        }
        guard !unassigned.isEmpty else { return }
        var states: [String: DeviceState] = [:]
        for device in Set(unassigned.map(\.device)) { states[device] = try await deviceState(device, tx: tx) }
        let writer = try tx.eventWriter(now: now)
        for visit in unassigned {
            let anchor = states[visit.device]?.anchor ?? visit.enteredMs.seconds
            _ = try await writer.close(
                visitID: visit.id, at: max(anchor, visit.enteredMs.seconds), reason: .regionUnassigned)
            states[visit.device]?.monitor.memberships[visit.region] = nil
        }
        try await save(states.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, now: now, tx: tx)
    }
}
