import FencepostCore

/// Reading outbox rows, whose payload is either stored text or, when NULL, a reference to the
/// event, visit or region at the row's version, rendered here from the entity's row: the same
/// bytes a stored copy would hold. An ingest and a region apply write references; everything
/// else (a region's removal, health events, what sync applies) stores its text.
///
/// A reference stays exact because the rows it points to change only in ways it can follow: a
/// geofence event never changes; a visit opened by the tracker is version 1 (its open form can
/// be rendered from any later state: device, region and enter time never change) and becomes
/// version 2 when it closes. The one other writer, sync applying a newer version of an entity
/// from elsewhere, first stores the rendered text of the rows referring to it
/// (``storeRenderedPayloads(entity:id:db:)``). A region's row holds its canonical feature, the
/// payload its outbox row would carry, and is only ever replaced or removed by a region apply,
/// which first stores the text of the rows referring to it
/// (``storeRenderedRegionPayloads(ids:tx:)``); the join checks the version all the same.
enum OutboxPayload {
    /// An outbox row (`o`) with the columns of the entity it may refer to (`e`, `v`).
    static let select = """
        SELECT o.seq, o.entity, o.entity_id, o.op, o.version, o.idempotency_key, o.payload, o.attempts,
            e.kind AS e_kind, e.device AS e_device, e.region AS e_region, e.visit_id AS e_visit_id, e.time AS e_time,
            e.lat AS e_lat, e.lon AS e_lon, e.flags AS e_flags, e.properties AS e_properties,
            v.device AS v_device, v.region AS v_region, v.entered_ms AS v_entered_ms, v.entered_at AS v_entered_at,
            v.exited_ms AS v_exited_ms, v.exited_at AS v_exited_at, v.status AS v_status, v.exit_reason AS v_exit_reason,
            r.feature AS r_feature
        FROM outbox o
        LEFT JOIN events e ON o.payload IS NULL AND o.entity = 'event' AND e.id = o.entity_id
        LEFT JOIN visits v ON o.payload IS NULL AND o.entity = 'visit' AND v.id = o.entity_id
        LEFT JOIN regions r ON o.payload IS NULL AND o.entity = 'region' AND r.id = o.entity_id AND r.version = o.version
        """

    /// The device of a row's event or visit (nil for a region), in SQL over ``select``.
    static func device(_ dialect: any SQLDialect) -> String {
        "COALESCE(e.device, v.device, \(dialect.jsonText("o.payload", "device")))"
    }

    /// The row as a change of the feed.
    static func change(_ row: SQLRow) -> SyncChange {
        let entity: String = row["entity"]
        let id: String = row["entity_id"]
        let version: Int = row["version"]
        return SyncChange(
            seq: row["seq"],
            mutation: SyncMutation(
                key: row["idempotency_key"] ?? "\(entity):\(id):v\(version)", entity: SyncEntity(entity), id: id,
                op: SyncOperation(rawValue: row["op"]) ?? .upsert, version: version, payload: text(row)))
    }

    /// The row's payload: as stored, or rendered from the entity it refers to.
    static func text(_ row: SQLRow) -> String {
        if let stored: String = row["payload"] { return stored }
        let id: String = row["entity_id"]
        switch SyncEntity(row["entity"]) {
        case .event:
            let flags: String = row["e_flags"] ?? ""
            return EventRow(
                id: id, kind: row["e_kind"] ?? "", source: "geofence", device: row["e_device"] ?? "",
                region: row["e_region"],
                visitID: row["e_visit_id"], timeMs: 0, time: row["e_time"] ?? "",
                flags: flags.isEmpty ? [] : flags.split(separator: ",").map(String.init), lat: row["e_lat"],
                lon: row["e_lon"],
                properties: row["e_properties"] ?? "{}"
            ).geofencePayload
        case .region:
            return row["r_feature"] ?? ""
        default:
            let version: Int = row["version"]
            var visit = VisitRow(
                id: id, device: row["v_device"] ?? "", region: row["v_region"] ?? "",
                enteredMs: row["v_entered_ms"] ?? 0,
                enteredAt: row["v_entered_at"] ?? "", exitedMs: row["v_exited_ms"], exitedAt: row["v_exited_at"],
                status: row["v_status"] ?? "open", exitReason: row["v_exit_reason"], version: version)
            if version == 1 {
                // The open form: what version 1 of a visit the tracker opened always was.
                (visit.exitedMs, visit.exitedAt, visit.status, visit.exitReason) = (nil, nil, "open", nil)
            }
            return visit.jsonText
        }
    }

    /// Stores the rendered text of the rows referring to an event or visit before sync replaces
    /// it with another version (found through the partial index `outbox_references`: a backend
    /// receiving a push asks for every visit that closes).
    static func storeRenderedPayloads(entity: SyncEntity, id: String, tx: any SQLTransaction) async throws {
        for row in try await tx.rows(
            select + " WHERE o.entity_id = ? AND o.payload IS NULL AND o.entity = ?", id, entity.name)
        {
            try await tx.execute("UPDATE outbox SET payload = ? WHERE seq = ?", text(row), row["seq"] as Int64)
        }
    }

    /// Stores the text of the rows referring to the regions `ids` before an apply replaces or
    /// removes their rows: the feature each holds, the version they refer to (every change of
    /// a region's row comes after this). A few hundred regions per statement, found through the
    /// partial index `outbox_references`.
    static func storeRenderedRegionPayloads(ids: [String], tx: any SQLTransaction) async throws {
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = ids[start..<min(start + 500, ids.count)]
            try await tx.execute(
                """
                UPDATE outbox SET payload = (
                    SELECT r.feature FROM regions r WHERE r.id = outbox.entity_id AND r.version = outbox.version)
                WHERE payload IS NULL AND entity = 'region' AND entity_id IN (
                """ + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")",
                chunk.map { .text($0) })
        }
    }
}
