package import FencepostCore
import FencepostGeometry
package import Foundation

/// A region as the store monitors it.
package struct MonitoredRegion: Sendable, Hashable {
    package var region: Region
    /// 1 when added, one more on every update.
    package var version: Int
    package var createdAt: String
    package var updatedAt: String
}

extension Store {
    // MARK: - Reading

    /// Id and hashes of every monitored region: all a plan needs.
    package func regionDigests() async throws -> [MonitoredRegionDigest] {
        try await read(Self.digests)
    }

    /// Every monitored region, in id order.
    package func monitoredRegions() async throws -> [MonitoredRegion] {
        try await read(Self.monitoredRegions)
    }

    /// Every monitored region, in id order, handed to `body` a batch (a few thousand) at a
    /// time: a caller that writes them out holds two batches, not a million regions.
    package func forEachMonitoredRegionBatch(_ body: ([MonitoredRegion]) throws -> Void) async throws {
        try await read { tx in try await Self.storedRegions(tx, Self.monitored, each: body) }
    }

    /// Stored regions are read across the cores from their compact form (the feature's text
    /// only for a region written before there was one), and their areas not validated again
    /// (they were when applied): what a service's start-up and every ingest wait for. Rows are
    /// read a batch at a time, each batch read into regions while the next is fetched: only
    /// two batches' rows are held at once, not a million.
    static func monitoredRegions(_ tx: any SQLTransaction) async throws -> [MonitoredRegion] {
        try await storedRegions(tx, monitored)
    }

    private static let monitored: @Sendable (Region, SQLRow) -> MonitoredRegion = { region, row in
        MonitoredRegion(
            region: region, version: row["version"], createdAt: row["created_at"], updatedAt: row["updated_at"])
    }

    /// The stored regions alone, read as ``monitoredRegions(_:)`` reads them: what a monitor is
    /// built from. A million regions are not read with their versions and then copied out
    /// of them (the two arrays were 0.5 GiB of a service's start-up at once).
    static func regions(_ tx: any SQLTransaction) async throws -> [Region] {
        try await storedRegions(tx) { region, _ in region }
    }

    /// Every stored region made into an `Item` with its row, in id order.
    private static func storedRegions<Item: Sendable>(
        _ tx: any SQLTransaction, _ make: @escaping @Sendable (Region, SQLRow) -> Item
    ) async throws -> [Item] {
        var regions: [Item] = []
        try await storedRegions(tx, make) { regions.append(contentsOf: $0) }
        return regions
    }

    /// Every stored region made into an `Item` with its row, in id order, handed to `each` a
    /// batch at a time.
    private static func storedRegions<Item: Sendable>(
        _ tx: any SQLTransaction, _ make: @escaping @Sendable (Region, SQLRow) -> Item,
        each: ([Item]) throws -> Void
    ) async throws {
        var batch: [SQLRow] = []
        var inFlight: BackgroundWork<[Result<Item, StoreError>]>?
        try await tx.forEachRow(
            """
            SELECT id, compact, CASE WHEN compact IS NULL THEN feature END AS feature, version, created_at, updated_at
            FROM regions ORDER BY id
            """, []
        ) { row in
            batch.append(row)
            guard batch.count == readingBatch else { return }
            let rows = batch
            batch = []
            let next = BackgroundWork { storedRegions(rows: rows, make) }
            if let inFlight { try each(try inFlight.wait().map { try $0.get() }) }
            inFlight = next
        }
        if let inFlight { try each(try inFlight.wait().map { try $0.get() }) }
        let last = try storedRegions(rows: batch, make).map { try $0.get() }
        if !last.isEmpty { try each(last) }
    }

    /// Stored rows read a batch at a time: only two batches' rows are held at once.
    private static let readingBatch = 8192

    /// `rows` read into regions (across the cores when many), in row order.
    private static func storedRegions<Item: Sendable>(
        rows: [SQLRow], _ make: @escaping @Sendable (Region, SQLRow) -> Item
    ) -> [Result<Item, StoreError>] {
        ParallelMap.map(rows, serialBelow: 512, state: { RegionConfigParser() }) {
            (parser: inout RegionConfigParser, row: SQLRow) -> Result<Item, StoreError> in
            let id: String = row["id"]
            do throws(RegionConfigError) {
                let region: Region
                if let compact = row["compact"] as [UInt8]? {
                    region = try parser.region(fromCompact: compact, source: "stored region \(id)")
                } else {
                    region = try parser.region(
                        fromFeature: Data((row["feature"] as String).utf8), source: "stored region \(id)",
                        validatingGeometry: false)
                }
                return .success(make(region, row))
            } catch {
                return .failure(StoreError.corruptRegion(id: id, issues: error.issues.map(\.description)))
            }
        }
    }

    // MARK: - Reconciling

    /// The diff between `desired` and the monitored set; changes nothing.
    package func planRegions(_ desired: [Region]) async throws -> RegionPlan {
        try await read { tx in try await Self.plan(desired, tx: tx) }
    }

    /// The same for a config read with the store's ``regionSources()``; nil when a region
    /// recognised by its source text has changed in the store since (read the config again).
    package func planRegions(_ desired: DesiredRegions) async throws -> RegionPlan? {
        try await read { tx in try await Self.plan(desired, tx: tx) }
    }

    /// The diff between `desired` and the monitored set, with the changed fields noted.
    static func plan(_ desired: [Region], tx: any SQLTransaction) async throws -> RegionPlan {
        try await plan(DesiredRegions(regions: desired), tx: tx)!
    }

    /// The diff between `desired` and the monitored set, with the changed fields noted; nil
    /// when a recognised region's source is no longer the stored one.
    static func plan(_ desired: DesiredRegions, tx: any SQLTransaction) async throws -> RegionPlan? {
        guard var plan = RegionPlan(desired: desired, monitored: try await Self.digests(tx)) else { return nil }
        try await Self.noteChangedFields(&plan, tx: tx)
        return plan
    }

    /// The stored regions by the fingerprint of the feature text they were last applied from:
    /// what a config reader recognises unchanged features by (``RegionConfigLoader/desired(_:sources:parser:)``).
    package func regionSources() async throws -> RegionSourceIndex {
        try await read { tx in
            let count: Int = try await tx.value("SELECT count(*) FROM regions WHERE source_hash IS NOT NULL") ?? 0
            var index = RegionSourceIndex(capacity: count)
            try await tx.forEachRow(
                "SELECT id, source_hash, min_lon, min_lat, max_lon, max_lat FROM regions WHERE source_hash IS NOT NULL",
                []
            ) { row in
                guard let fingerprint = SourceFingerprint(hex: row["source_hash"]) else { return }
                index.add(
                    RecognizedRegion(
                        id: row["id"], fingerprint: fingerprint,
                        bounds: Envelope(
                            minX: row["min_lon"], minY: row["min_lat"], maxX: row["max_lon"], maxY: row["max_lat"])))
            }
            return index
        }
    }

    /// What changed in each updated region, from its stored feature (read for those only).
    static func noteChangedFields(_ plan: inout RegionPlan, tx: any SQLTransaction) async throws {
        var updated: [String] = []
        for case .update(let region, _, _) in plan.changes { updated.append(region.id) }
        var stored: [String: JSONValue] = [:]
        try await tx.forEachRow("SELECT id, feature FROM regions WHERE id IN", in: updated) { row in
            stored[row["id"]] = try? JSONParser.parse(Data((row["feature"] as String).utf8))
        }
        plan.noteChangedFields(stored: stored)
    }

    /// Makes the monitored set equal `desired` in one transaction and returns what changed.
    ///
    /// The plan is computed inside the transaction, so a concurrent apply cannot interleave;
    /// retired regions (removed, or with a changed geometry) have their open visits closed
    /// (`region_removed`, `region_changed`) in the same transaction. Any failure rolls everything back.
    @discardableResult
    package func applyRegions(_ desired: [Region], at now: Date = Date()) async throws -> RegionPlan {
        try await applyRegions(at: now) { _ in desired }
    }

    /// The same for a config read with the store's ``regionSources()``: each region read is
    /// stored with the fingerprint of its text, for the next plan to recognise it by. Nil,
    /// nothing written, when a region recognised by its source text has changed in the store
    /// since (read the config again).
    package func applyRegions(_ desired: DesiredRegions, at now: Date = Date()) async throws -> RegionPlan? {
        let timestamp = Timestamp.format(now)
        return try await write { tx in
            try await tx.dialect.lock("regions", in: tx)
            return try await apply(desired, timestamp: timestamp, origin: .local, outboxReferences: true, tx: tx)
        }
    }

    /// Applies the set `edit` makes from the monitored one (which it may read through the
    /// function it is given), read and written in one transaction: concurrent single-region
    /// edits cannot undo each other.
    @discardableResult
    package func applyRegions(
        at now: Date = Date(), editing edit: (_ monitored: () async throws -> [Region]) async throws -> [Region]
    ) async throws -> RegionPlan {
        let timestamp = Timestamp.format(now)
        return try await write { tx in
            try await tx.dialect.lock("regions", in: tx)
            let desired = try await edit { try await Self.regions(tx) }
            return try await apply(desired, timestamp: timestamp, origin: .local, outboxReferences: true, tx: tx)
        }
    }

    /// Where a region change comes from: a local edit is queued for sync (an outbox row per
    /// added, updated or removed region); one pulled from the backend is not sent back.
    enum RegionChangeOrigin { case local, pulled }

    /// Makes the monitored set equal `desired` inside the caller's transaction (which holds the
    /// regions lock).
    ///
    /// With `outboxReferences`, a local edit's outbox rows refer to the regions written instead
    /// of carrying a copy of each feature (``OutboxPayload``): only for the one apply of its
    /// transaction. Where one transaction applies several times (a sync batch's runs of region
    /// edits), a later apply could replace a region an earlier one queued a row for, and on
    /// PostgreSQL that row is not in the outbox until the commit, where it could not be given
    /// its text first.
    func apply(
        _ desired: [Region], timestamp: String, origin: RegionChangeOrigin, outboxReferences: Bool = false,
        tx: any SQLTransaction
    ) async throws -> RegionPlan {
        try await apply(
            DesiredRegions(regions: desired), timestamp: timestamp, origin: origin, outboxReferences: outboxReferences,
            tx: tx)!
    }

    /// The same with the regions' source fingerprints, nil when a recognised region changed.
    func apply(
        _ desired: DesiredRegions, timestamp: String, origin: RegionChangeOrigin, outboxReferences: Bool = false,
        tx: any SQLTransaction
    ) async throws -> RegionPlan? {
        guard let plan = try await Self.plan(desired, tx: tx) else { return nil }
        // Outbox rows referring to a region about to be replaced or removed get its text first,
        // a few hundred regions per statement.
        var replaced: [String] = []
        for change in plan.changes {
            switch change {
            case .update(let region, _, _): replaced.append(region.id)
            case .remove(let id): replaced.append(id)
            case .add: break
            }
        }
        try await OutboxPayload.storeRenderedRegionPayloads(ids: replaced, tx: tx)
        var sources = SourceCursor(desired)
        // Regions are encoded (canonical text, compact form, hashes) a chunk at a time across the
        // cores, the next chunk while this one is written, in order; two chunks' texts are all
        // that is held at once.
        let chunks = stride(from: 0, to: plan.changes.count, by: 4096).map {
            $0..<min($0 + 4096, plan.changes.count)
        }
        var next = chunks.first.map { Self.encoding(Array(plan.changes[$0])) }
        for (number, chunk) in chunks.enumerated() {
            let encoded = next!.wait()
            next = number + 1 < chunks.count ? Self.encoding(Array(plan.changes[chunks[number + 1]])) : nil
            for (change, encoded) in zip(plan.changes[chunk], encoded) {
                try await Self.write(
                    change, encoded: encoded, source: sources[change.regionID], timestamp: timestamp, origin: origin,
                    outboxReferences: outboxReferences, tx: tx)
            }
        }
        // A region read unchanged was not recognised by its text (or it would not have been
        // read): the text is new, and the next plan recognises it by it.
        sources = SourceCursor(desired)
        for id in plan.unchanged {
            guard let source = sources[id] else { continue }
            try await tx.execute("UPDATE regions SET source_hash = ? WHERE id = ?", source, id)
        }
        try await Self.addMissingCompactForms(tx)
        if !plan.changes.isEmpty { try await Self.bumpRegionsRevision(tx) }
        for (regionID, reason) in plan.retirements {
            try await Self.closeOpenVisits(regionID: regionID, reason: reason, now: timestamp, tx: tx)
        }
        // A region narrowed to some devices closes the others' visits in it.
        let narrowed = plan.changes.contains { change in
            if case .update(let region, _, _) = change { return !region.audience.isEveryone }
            return false
        }
        if narrowed { try await Self.closeUnassignedVisits(now: timestamp, tx: tx) }
        return plan
    }

    /// Gives each row written before the compact form (migration v18) one, from its feature,
    /// so that a store from before reads its regions fast after its first apply. The same
    /// region: the compact form is made from the region the feature reads back as.
    private static func addMissingCompactForms(_ tx: any SQLTransaction) async throws {
        var rows: [SQLRow] = []
        try await tx.forEachRow("SELECT id, feature FROM regions WHERE compact IS NULL", []) { rows.append($0) }
        guard !rows.isEmpty else { return }
        let compact = ParallelMap.map(rows, serialBelow: 512, state: { RegionConfigParser() }) {
            (parser: inout RegionConfigParser, row: SQLRow) -> [UInt8]? in
            // A feature that does not read is left as it is: reading it says so, as before.
            (try? parser.region(
                fromFeature: Data((row["feature"] as String).utf8), source: "stored region", validatingGeometry: false))
                .map(RegionCompactForm.encode)
        }
        for (row, compact) in zip(rows, compact) {
            guard let compact else { continue }
            try await tx.execute("UPDATE regions SET compact = ? WHERE id = ?", compact, row["id"] as String)
        }
    }

    /// The fingerprint of each region read from its text, looked up by ids in ascending order
    /// (a plan's changes, its unchanged ids) as the desired regions are: a walk, not a table
    /// of a million.
    private struct SourceCursor {
        let desired: DesiredRegions
        var next = 0

        init(_ desired: DesiredRegions) {
            self.desired = desired
        }

        subscript(id: String) -> String? {
            mutating get {
                while next < desired.regions.count, desired.regions[next].id < id { next += 1 }
                guard next < desired.regions.count, desired.regions[next].id == id else { return nil }
                return desired.sources[next]?.hex
            }
        }
    }

    /// One change of a plan written, with its outbox row when it is a local edit.
    private static func write(
        _ change: RegionChange, encoded: EncodedRegion?, source: String?, timestamp: String, origin: RegionChangeOrigin,
        outboxReferences: Bool, tx: any SQLTransaction
    ) async throws {
        let version: Int
        switch change {
        case .add(let region):
            version = 1
            try await Self.insert(
                region, encoded!, source: source, version: version, createdAt: timestamp, updatedAt: timestamp, tx: tx)
        case .update(let region, _, _):
            guard let current = try await tx.row("SELECT version, created_at FROM regions WHERE id = ?", region.id)
            else {
                preconditionFailure("planned update of \(region.id) has no row in the same transaction")
            }
            version = current["version"] + 1
            try await Self.insert(
                region, encoded!, source: source, version: version, createdAt: current["created_at"],
                updatedAt: timestamp, tx: tx)
        case .remove(let id):
            version = (try await tx.value("SELECT version FROM regions WHERE id = ?", id) ?? 0) + 1
            try await tx.execute("DELETE FROM regions WHERE id = ?", id)
        }
        if origin == .local {
            try await Self.enqueue(
                change, payload: outboxReferences ? nil : encoded?.feature, version: version, now: timestamp, tx: tx)
        }
    }

    /// `changes` encoded across the cores, in order (nil for a removal), on another thread
    /// while the caller writes the chunk before.
    private static func encoding(_ changes: [RegionChange]) -> BackgroundWork<[EncodedRegion?]> {
        BackgroundWork {
            ParallelMap.map(changes) { change -> EncodedRegion? in
                switch change {
                case .add(let region), .update(let region, _, _): return EncodedRegion(region)
                case .remove: return nil
                }
            }
        }
    }

    /// What the store writes of a region: its canonical feature, its compact form and the hashes.
    struct EncodedRegion: Sendable {
        var feature: String
        var compact: [UInt8]
        var contentHash: String
        var geometryHash: String

        init(_ region: Region) {
            (feature, contentHash) = region.canonicalFeatureAndHash
            compact = RegionCompactForm.encode(region)
            geometryHash = region.geometryHash
        }
    }

    /// Writes a region's row (`feature` holds the whole region as canonical GeoJSON, `compact`
    /// the same region for reading back fast, `source` the fingerprint of the text it was read
    /// from, if any), over the one it updates.
    private static func insert(
        _ region: Region, _ encoded: EncodedRegion, source: String?, version: Int, createdAt: String,
        updatedAt: String, tx: any SQLTransaction
    ) async throws {
        let bounds = region.shape.bounds
        try await tx.execute(
            """
            INSERT INTO regions (id, name, kind, enabled, feature, compact, content_hash, geometry_hash, version, min_lon,
                min_lat, max_lon, max_lat, created_at, updated_at, source_hash)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET name = excluded.name, kind = excluded.kind, enabled = excluded.enabled,
                feature = excluded.feature, compact = excluded.compact, content_hash = excluded.content_hash, geometry_hash = excluded.geometry_hash,
                version = excluded.version, min_lon = excluded.min_lon, min_lat = excluded.min_lat, max_lon = excluded.max_lon,
                max_lat = excluded.max_lat, updated_at = excluded.updated_at, source_hash = excluded.source_hash
            """,
            region.id, region.name, region.shape.kind, region.settings.enabled, encoded.feature, encoded.compact,
            encoded.contentHash,
            encoded.geometryHash, version, bounds.minX, bounds.minY, bounds.maxX, bounds.maxY, createdAt, updatedAt,
            source)
    }

    /// A region edit as a sync mutation. Its key is new for every edit (regions are edited by
    /// people, not derived, so the same content twice is two edits). `payload` is the canonical
    /// feature of an added or updated region, nil to refer to the region at its version
    /// (``OutboxPayload``): the feature its row holds is then not stored twice (a third of a
    /// million-region apply's bytes).
    private static func enqueue(
        _ change: RegionChange, payload: String?, version: Int, now: String, tx: any SQLTransaction
    ) async throws {
        // Eight random hex digits, as a UUID's first eight: from the system's generator, since
        // Foundation's UUID opened /dev/urandom for each (a million opens in a large apply).
        let digits = String(UInt32.random(in: .min ... .max), radix: 16)
        let edit = String(repeating: "0", count: 8 - digits.count) + digits
        switch change {
        case .add(let region), .update(let region, _, _):
            try await enqueue(
                entity: .region, id: region.id, version: version, key: "region:\(region.id):v\(version):\(edit)",
                payload: payload, now: now, tx: tx)
        case .remove(let id):
            try await enqueue(
                entity: .region, id: id, op: .delete, version: version, key: "region:\(id):v\(version):\(edit)",
                payload: "{}",
                now: now, tx: tx)
        }
    }

    /// Grows by one on every apply that changes something; a running service compares it to
    /// the revision its monitor was built from.
    package func regionsRevision() async throws -> Int64 {
        try await read(Self.regionsRevision)
    }

    static func regionsRevision(_ tx: any SQLTransaction) async throws -> Int64 {
        try await tx.value("SELECT value FROM store_meta WHERE key = 'regions_revision'") ?? 0
    }

    static func bumpRegionsRevision(_ tx: any SQLTransaction) async throws {
        try await tx.execute(
            """
            INSERT INTO store_meta (key, value) VALUES ('regions_revision', 1)
            ON CONFLICT(key) DO UPDATE SET value = store_meta.value + 1
            """)
    }

    private static func digests(_ tx: any SQLTransaction) async throws -> [MonitoredRegionDigest] {
        var digests: [MonitoredRegionDigest] = []
        try await tx.forEachRow(
            "SELECT id, content_hash, geometry_hash, enabled, source_hash FROM regions ORDER BY id", []
        ) { row in
            digests.append(
                MonitoredRegionDigest(
                    id: row["id"], contentHash: row["content_hash"], geometryHash: row["geometry_hash"],
                    enabled: row["enabled"], sourceHash: row["source_hash"]))
        }
        return digests
    }
}

extension Store {
    /// The monitored regions and the roster with the revision they are at, read in one snapshot.
    package func monitoredRegionsAndRevision() async throws -> (
        regions: [Region], roster: DeviceRoster, revision: Int64
    ) {
        try await read { tx in
            (
                try await Self.regions(tx), try await Self.roster(tx),
                try await Self.regionsRevision(tx)
            )
        }
    }
}
