package import FencepostCore
package import Foundation

/// What a sync caller may change: every device's data or one device's, and regions or not.
package struct SyncPermissions: Sendable {
    /// nil: any device.
    package var device: String?
    package var regions: Bool

    package init(device: String?, regions: Bool) {
        self.device = device
        self.regions = regions
    }
}

/// A mutation the server will not apply, with the reason sent back to the client.
struct SyncRejection: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}

/// The server side of sync: applying pushed mutations once per idempotency key, and the
/// change feed pulls read.
extension Store {
    /// Applies a batch in one transaction and answers per mutation, in order. A key applied
    /// before answers `duplicate` and changes nothing; a rejected mutation changes nothing and
    /// is not remembered, so it applies once its cause is fixed. (Every rejection is decided
    /// before the mutation writes anything but its claimed key, which is then released, so no
    /// savepoint is needed to undo one.)
    /// Applied events and visits enter this store's outbox too (webhooks, the live stream and
    /// further sync see them); a version older than the one held is applied as a no-op.
    package func applyMutations(
        _ mutations: [SyncMutation], permissions: SyncPermissions, at now: Date = Date()
    ) async throws -> [SyncResult] {
        let timestamp = Timestamp.format(now)
        return try await write { tx in
            var results: [SyncResult] = []
            results.reserveCapacity(mutations.count)
            var regions = RegionSet()
            // The keys are claimed first: another transaction applying the same key at the same
            // time (another instance) waits on it and then finds it taken. Then what the batch
            // needs to know of the stored events and visits, read at once: a database server is
            // asked a few times per batch, not a few times per mutation.
            var unclaimed = try await Self.claim(mutations, timestamp: timestamp, tx: tx)
            var known = try await KnownRows(for: mutations, tx: tx)
            var upserts = PendingUpserts()
            for mutation in mutations {
                // A key claimed before, or earlier in this batch, is applied once.
                guard unclaimed.remove(mutation.key) != nil else {
                    results.append(.duplicate)
                    continue
                }
                do {
                    if mutation.entity != .region { try await regions.flush(into: self, timestamp: timestamp, tx: tx) }
                    try await apply(
                        mutation, permissions: permissions, regions: &regions, known: &known, upserts: &upserts,
                        timestamp: timestamp, tx: tx)
                    results.append(.applied)
                } catch let rejection as SyncRejection {
                    // Not remembered: fixed and sent again, it applies.
                    try await tx.execute("DELETE FROM sync_applied WHERE idempotency_key = ?", mutation.key)
                    results.append(.rejected(reason: rejection.reason))
                }
            }
            try await upserts.flush(tx)
            try await regions.flush(into: self, timestamp: timestamp, tx: tx)
            return results
        }
    }

    /// Records the mutations' keys as applied, a few hundred per statement in key order (two
    /// instances claiming overlapping batches never wait for each other in a circle); returns
    /// the keys that were not applied before.
    private static func claim(_ mutations: [SyncMutation], timestamp: String, tx: any SQLTransaction) async throws
        -> Set<
            String
        >
    {
        var claimed = Set<String>()
        let sorted = mutations.sorted { $0.key < $1.key }
        for start in stride(from: 0, to: sorted.count, by: 500) {
            let chunk = sorted[start..<min(start + 500, sorted.count)]
            let arguments = chunk.flatMap { mutation -> [SQLValue] in
                [
                    .text(mutation.key), .text(mutation.entity.name), .text(mutation.id), mutation.version.sqlValue,
                    .text(timestamp),
                ]
            }
            let rows = try await tx.rows(
                """
                INSERT INTO sync_applied (idempotency_key, entity, entity_id, version, applied_at)
                VALUES \(Array(repeating: "(?, ?, ?, ?, ?)", count: chunk.count).joined(separator: ", "))
                ON CONFLICT DO NOTHING RETURNING idempotency_key
                """, arguments)
            for row in rows { claimed.insert(row["idempotency_key"]) }
        }
        return claimed
    }

    /// The stored versions of the events and visits a batch names, and which of them have
    /// outbox rows that refer to them (rendered before a newer version replaces them); kept up
    /// to date as the batch applies.
    private struct KnownRows {
        var versions: [String: Int] = [:]
        var referredTo: Set<String> = []

        init(for mutations: [SyncMutation], tx: any SQLTransaction) async throws {
            for (entity, table) in [(SyncEntity.event, "events"), (.visit, "visits")] {
                let ids = Array(Set(mutations.lazy.filter { $0.entity == entity }.map(\.id)))
                try await tx.forEachRow("SELECT id, version FROM \(table) WHERE id IN", in: ids) { row in
                    versions[entity.name + ":" + (row["id"] as String)] = row["version"] as Int
                }
                try await tx.forEachRow(
                    "SELECT DISTINCT entity_id FROM outbox WHERE payload IS NULL AND entity = '\(entity.name)' AND entity_id IN",
                    in: ids
                ) {
                    row in referredTo.insert(entity.name + ":" + (row["entity_id"] as String))
                }
            }
        }

        /// Whether `mutation` is newer than what is stored; if so, renders the rows that refer
        /// to the stored version first and takes the mutation's version as the stored one.
        mutating func replaces(_ mutation: SyncMutation, tx: any SQLTransaction) async throws -> Bool {
            let key = mutation.entity.name + ":" + mutation.id
            if let held = versions[key], held >= mutation.version { return false }
            if referredTo.remove(key) != nil {
                try await OutboxPayload.storeRenderedPayloads(entity: mutation.entity, id: mutation.id, tx: tx)
            }
            versions[key] = mutation.version
            return true
        }
    }

    /// The monitored regions, read once per batch, with the batch's region edits applied to
    /// them; a run of region edits goes through the reconciler once, before the next event or
    /// visit and at the end of the batch (planning the whole set per edit made a batch of
    /// 1,000 region edits take seconds).
    private struct RegionSet {
        var byID: [String: Region]?
        var edited = false

        mutating func flush(into store: Store, timestamp: String, tx: any SQLTransaction) async throws {
            guard edited, let byID else { return }
            _ = try await store.apply(
                byID.values.sorted { $0.id < $1.id }, timestamp: timestamp, origin: .local, tx: tx)
            edited = false
        }
    }

    private func apply(
        _ mutation: SyncMutation, permissions: SyncPermissions, regions: inout RegionSet, known: inout KnownRows,
        upserts: inout PendingUpserts, timestamp: String, tx: any SQLTransaction
    ) async throws {
        // Anything but an event or visit upsert may read or write the tables those go to: the
        // upserts held so far are written first.
        if mutation.op != .upsert || (mutation.entity != .event && mutation.entity != .visit) {
            try await upserts.flush(tx)
        }
        switch (mutation.entity, mutation.op) {
        case (.region, _):
            guard permissions.regions else { throw SyncRejection("regions can only be changed with an admin token") }
            try await applyRegion(mutation, regions: &regions, tx: tx)
        case (.event, .upsert):
            let fields = try Self.payloadFields(mutation)
            try Self.permit(fields, permissions)
            try await Self.upsertEvent(mutation, fields, known: &known, upserts: &upserts, timestamp: timestamp, tx: tx)
        case (.visit, .upsert):
            let fields = try Self.payloadFields(mutation)
            try Self.permit(fields, permissions)
            try await Self.upsertVisit(mutation, fields, known: &known, upserts: &upserts, timestamp: timestamp, tx: tx)
        case (.visit, .delete):
            // A visit merged into another stay (``StayMerge``): its payload is its last form.
            let fields = try Self.payloadFields(mutation)
            try Self.permit(fields, permissions)
            guard try await known.replaces(mutation, tx: tx) else { return }
            try await tx.execute("DELETE FROM visits WHERE id = ?", mutation.id)
            try await Self.enqueue(
                entity: .visit, id: mutation.id, op: .delete, version: mutation.version, key: mutation.key,
                payload: mutation.payload, now: timestamp, tx: tx)
        case (.event, .delete):
            throw SyncRejection("deleting \(mutation.entity)s is not supported")
        case (.unknown(let name), _):
            throw SyncRejection("unknown entity \"\(name)\"")
        }
    }

    private func applyRegion(_ mutation: SyncMutation, regions: inout RegionSet, tx: any SQLTransaction) async throws {
        if regions.byID == nil { try await tx.dialect.lock("regions", in: tx) }
        var byID: [String: Region]
        if let edited = regions.byID {
            byID = edited
        } else {
            byID = Dictionary(
                uniqueKeysWithValues: try await Self.monitoredRegions(tx).map { ($0.region.id, $0.region) })
        }
        switch mutation.op {
        case .delete:
            byID[mutation.id] = nil
        case .upsert:
            let region: Region
            do {
                region = try RegionConfigParser().region(
                    fromFeature: Data(mutation.payload.utf8), source: "mutation \(mutation.key)")
            } catch {
                throw SyncRejection(error.issues.map(\.description).joined(separator: "; "))
            }
            guard region.id == mutation.id else {
                throw SyncRejection("the feature's id \(region.id) is not the mutation's \(mutation.id)")
            }
            byID[mutation.id] = region
        }
        regions.byID = byID
        regions.edited = true
    }

    private static func payloadFields(_ mutation: SyncMutation) throws -> [String: JSONValue] {
        guard case .object(let fields)? = try? mutation.parsedPayload ?? JSONParser.parse(Array(mutation.payload.utf8))
        else {
            throw SyncRejection("the payload is not a JSON object")
        }
        if let id = fields["id"]?.stringValue, id != mutation.id {
            throw SyncRejection("the payload's id \(id) is not the mutation's \(mutation.id)")
        }
        guard mutation.version >= 1 else { throw SyncRejection("version must be 1 or more") }
        return fields
    }

    private static func permit(_ fields: [String: JSONValue], _ permissions: SyncPermissions) throws {
        guard let device = fields["device"]?.stringValue, !device.isEmpty else {
            throw SyncRejection("the payload has no device")
        }
        if let own = permissions.device, own != device {
            throw SyncRejection("this token may sync only device \(own)'s data, not \(device)'s")
        }
    }

    private static func text(_ fields: [String: JSONValue], _ name: String) throws -> String {
        guard let value = fields[name]?.stringValue, !value.isEmpty else {
            throw SyncRejection("the payload has no \(name)")
        }
        return value
    }

    private static func time(_ fields: [String: JSONValue], _ name: String) throws -> (text: String, ms: Int64)? {
        guard let value = fields[name], value != .null else { return nil }
        guard let text = value.stringValue, let seconds = Timestamp.parse(Substring(text)) else {
            throw SyncRejection("\(name) is not an RFC 3339 time")
        }
        return (Timestamp.format(seconds: seconds), Timestamp.milliseconds(seconds))
    }

    private static func upsertEvent(
        _ mutation: SyncMutation, _ fields: [String: JSONValue], known: inout KnownRows,
        upserts: inout PendingUpserts, timestamp: String, tx: any SQLTransaction
    ) async throws {
        let kind = try text(fields, "kind")
        guard let time = try time(fields, "time") else { throw SyncRejection("the payload has no time") }
        let flags = (fields["flags"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ",")
        let values: [any SQLValueConvertible] = [
            mutation.id, kind, fields["source"]?.stringValue ?? "geofence", try text(fields, "device"),
            fields["region"]?.stringValue,
            fields["visit_id"]?.stringValue, time.ms, time.text, fields["lat"]?.numberValue, fields["lon"]?.numberValue,
            flags,
            (fields["properties"] ?? .object([:])).canonicalText(), mutation.version, timestamp,
        ]
        // Checked whole before anything is written or taken as stored.
        guard try await known.replaces(mutation, tx: tx) else { return }
        try await upserts.add(.event, id: mutation.id, values.map(\.sqlValue), tx: tx)
        try await enqueue(
            entity: .event, id: mutation.id, version: mutation.version, key: mutation.key, payload: mutation.payload,
            now: timestamp, tx: tx)
    }

    private static func upsertVisit(
        _ mutation: SyncMutation, _ fields: [String: JSONValue], known: inout KnownRows,
        upserts: inout PendingUpserts, timestamp: String, tx: any SQLTransaction
    ) async throws {
        let region = try text(fields, "region")
        guard let entered = try time(fields, "entered_at") else { throw SyncRejection("the payload has no entered_at") }
        let exited = try time(fields, "exited_at")
        let status = try text(fields, "status")
        guard status == "open" || status == "closed" else {
            throw SyncRejection("status must be open or closed, not \(status)")
        }
        guard (status == "closed") == (exited != nil) else {
            throw SyncRejection("a closed visit needs exited_at, an open one none")
        }
        let values: [any SQLValueConvertible] = [
            mutation.id, try text(fields, "device"), region, entered.ms, entered.text, exited?.ms, exited?.text, status,
            fields["exit_reason"]?.stringValue, mutation.version, timestamp,
        ]
        guard try await known.replaces(mutation, tx: tx) else { return }
        try await upserts.add(.visit, id: mutation.id, values.map(\.sqlValue), tx: tx)
        try await enqueue(
            entity: .visit, id: mutation.id, version: mutation.version, key: mutation.key, payload: mutation.payload,
            now: timestamp, tx: tx)
    }

    /// The batch's event and visit upserts, held until something else needs the tables (or
    /// the batch ends) and then written a few hundred rows per statement: a database server
    /// is asked once per few hundred mutations, not once per mutation. The rows that reach the
    /// tables are the ones a statement per mutation would leave: a later version of an id
    /// held here replaces the earlier one (``KnownRows`` lets only newer versions through), and
    /// each id is in one statement once (PostgreSQL refuses an upsert that updates a row twice).
    private struct PendingUpserts {
        private var events = PendingRows()
        private var visits = PendingRows()
        /// Held rows written at once from this many: the batch's memory stays bounded.
        private static let flushCount = 5_000
        /// Rows per statement: 14 values a row stays under both backends' limits on values
        /// in one statement (SQLite's 32,766, PostgreSQL's 65,535).
        static let rowsPerStatement = 1_000

        mutating func add(_ entity: SyncEntity, id: String, _ values: [SQLValue], tx: any SQLTransaction)
            async throws
        {
            if entity == .event { events.add(id: id, values) } else { visits.add(id: id, values) }
            if events.count + visits.count >= Self.flushCount { try await flush(tx) }
        }

        mutating func flush(_ tx: any SQLTransaction) async throws {
            try await write(events.take(), into: Self.events, tx: tx)
            try await write(visits.take(), into: Self.visits, tx: tx)
        }

        private func write(_ rows: [[SQLValue]], into upsert: Upsert, tx: any SQLTransaction) async throws {
            for start in stride(from: 0, to: rows.count, by: Self.rowsPerStatement) {
                let chunk = rows[start..<min(start + Self.rowsPerStatement, rows.count)]
                let tuple = "(" + Array(repeating: "?", count: upsert.columns.count).joined(separator: ", ") + ")"
                try await tx.execute(
                    "INSERT INTO \(upsert.table) (\(upsert.columns.joined(separator: ", "))) VALUES "
                        + Array(repeating: tuple, count: chunk.count).joined(separator: ", ")
                        + " ON CONFLICT(id) DO UPDATE SET "
                        + upsert.updated.map { "\($0) = excluded.\($0)" }.joined(separator: ", "),
                    Array(chunk.joined()))
            }
        }

        private struct Upsert {
            var table: String
            var columns: [String]
            /// The columns an update changes (an event keeps its `created_at`).
            var updated: [String]
        }

        private static let events = Upsert(
            table: "events",
            columns: [
                "id", "kind", "source", "device", "region", "visit_id", "time_ms", "time", "lat", "lon", "flags",
                "properties", "version", "created_at",
            ],
            updated: [
                "kind", "source", "device", "region", "visit_id", "time_ms", "time", "lat", "lon", "flags",
                "properties",
                "version",
            ])
        private static let visits = Upsert(
            table: "visits",
            columns: [
                "id", "device", "region", "entered_ms", "entered_at", "exited_ms", "exited_at", "status", "exit_reason",
                "version", "updated_at",
            ],
            updated: [
                "device", "region", "entered_ms", "entered_at", "exited_ms", "exited_at", "status", "exit_reason",
                "version", "updated_at",
            ])

        /// Rows by id, the last one added for an id kept.
        private struct PendingRows {
            private var byID: [String: [SQLValue]] = [:]
            var count: Int { byID.count }

            mutating func add(id: String, _ values: [SQLValue]) { byID[id] = values }

            /// The rows in id order (two batches upserting the same rows at once lock them in
            /// the same order), and none held any more.
            mutating func take() -> [[SQLValue]] {
                defer { byID = [:] }
                return byID.sorted { $0.key < $1.key }.map(\.value)
            }
        }
    }
    // MARK: - The change feed

    /// Outbox rows after `seq`, in order: for `entities` (nil: all), for a device-confined
    /// caller only regions and that device's events and visits, and for a group-confined one
    /// only the events and visits of the group's devices (the roster's as the read runs; no
    /// regions, which may be other tenants').
    package func syncChanges(
        after seq: Int64, entities: Set<SyncEntity>?, device: String?, group: String? = nil, limit: Int
    ) async throws
        -> [SyncChange]
    {
        try await read { tx in
            var conditions = ["o.seq > ?"]
            var arguments: [SQLValue] = [seq.sqlValue]
            if let entities {
                conditions.append("o.entity IN (\(entities.map { _ in "?" }.joined(separator: ",")))")
                arguments += entities.map(\.name).sorted().map(\.sqlValue)
            }
            if let device {
                conditions.append("(o.entity = 'region' OR \(OutboxPayload.device(tx.dialect)) = ?)")
                arguments.append(device.sqlValue)
            }
            if let group {
                conditions.append(
                    "(o.entity <> 'region' AND \(OutboxPayload.device(tx.dialect)) IN (\(tx.dialect.groupMembers)))")
                arguments.append(group.sqlValue)
            }
            arguments.append(limit.sqlValue)
            return try await tx.rows(
                OutboxPayload.select
                    + " WHERE \(conditions.joined(separator: " AND ")) ORDER BY o.seq LIMIT ?",
                arguments
            ).map(OutboxPayload.change)
        }
    }
}
