public import FencepostCore
public import Foundation
import GRDB

/// A region as the store monitors it.
public struct MonitoredRegion: Sendable, Hashable {
    public var region: Region
    /// 1 when added, one more on every update.
    public var version: Int
    public var createdAt: String
    public var updatedAt: String
}

/// A region row; `feature` holds the whole region as canonical GeoJSON.
struct RegionRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "regions"

    var id: String
    var name: String?
    var kind: String
    var enabled: Bool
    var feature: String
    var contentHash: String
    var geometryHash: String
    var version: Int
    var minLon: Double
    var minLat: Double
    var maxLon: Double
    var maxLat: Double
    var createdAt: String
    var updatedAt: String

    enum CodingKeys: String, CodingKey {
        case id, name, kind, enabled, feature, version
        case contentHash = "content_hash"
        case geometryHash = "geometry_hash"
        case minLon = "min_lon"
        case minLat = "min_lat"
        case maxLon = "max_lon"
        case maxLat = "max_lat"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    init(region: Region, version: Int, createdAt: String, updatedAt: String) {
        let bounds = region.shape.bounds
        self.id = region.id
        self.name = region.name
        self.kind = region.shape.kind
        self.enabled = region.settings.enabled
        self.feature = region.feature.canonicalText()
        self.contentHash = region.contentHash
        self.geometryHash = region.geometryHash
        self.version = version
        self.minLon = bounds.minX
        self.minLat = bounds.minY
        self.maxLon = bounds.maxX
        self.maxLat = bounds.maxY
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

extension Store {
    // MARK: - Reading

    /// Id and hashes of every monitored region: all a plan needs.
    public func regionDigests() throws -> [MonitoredRegionDigest] {
        try writer.read(Self.digests)
    }

    /// Every monitored region, in id order.
    public func monitoredRegions() throws -> [MonitoredRegion] {
        try writer.read(Self.monitoredRegions)
    }

    static func monitoredRegions(_ db: Database) throws -> [MonitoredRegion] {
        let records = try RegionRecord.order(Column("id")).fetchAll(db)
        let parser = RegionConfigParser()
        return try records.map { record in
            let region: Region
            do {
                region = try parser.region(fromFeature: Data(record.feature.utf8), source: "stored region \(record.id)")
            } catch let error as RegionConfigError {
                throw StoreError.corruptRegion(id: record.id, issues: error.issues.map(\.description))
            }
            return MonitoredRegion(region: region, version: record.version, createdAt: record.createdAt, updatedAt: record.updatedAt)
        }
    }

    // MARK: - Reconciling

    /// The diff between `desired` and the monitored set; changes nothing.
    public func planRegions(_ desired: [Region]) throws -> RegionPlan {
        RegionPlan(desired: desired, monitored: try regionDigests())
    }

    /// Makes the monitored set equal `desired` in one transaction and returns what changed.
    ///
    /// The plan is computed inside the transaction, so a concurrent apply cannot interleave;
    /// retired regions (removed, or with a changed geometry) have their open visits closed
    /// (`region_removed`, `region_changed`) and run the retirement hooks in the same
    /// transaction. Any failure rolls everything back.
    @discardableResult
    public func applyRegions(_ desired: [Region], at now: Date = Date()) throws -> RegionPlan {
        try applyRegions(at: now) { _ in desired }
    }

    /// Applies the set `edit` makes from the monitored one (which it may read through the
    /// function it is given), read and written in one transaction: concurrent single-region
    /// edits cannot undo each other.
    @discardableResult
    public func applyRegions(at now: Date = Date(), editing edit: (_ monitored: () throws -> [Region]) throws -> [Region]) throws -> RegionPlan {
        let timestamp = Timestamp.format(now)
        return try writer.write { db in
            let desired = try edit { try Self.monitoredRegions(db).map(\.region) }
            return try apply(desired, timestamp: timestamp, origin: .local, db: db)
        }
    }

    /// Where a region change comes from: a local edit is queued for sync (an outbox row per
    /// added, updated or removed region); one pulled from the backend is not sent back.
    enum RegionChangeOrigin { case local, pulled }

    /// Makes the monitored set equal `desired` inside the caller's transaction.
    func apply(_ desired: [Region], timestamp: String, origin: RegionChangeOrigin, db: Database) throws -> RegionPlan {
        let plan = RegionPlan(desired: desired, monitored: try Self.digests(db))
        for change in plan.changes {
            let version: Int
            switch change {
            case .add(let region):
                version = 1
                try RegionRecord(region: region, version: version, createdAt: timestamp, updatedAt: timestamp).insert(db)
            case .update(let region, _, _):
                guard let current = try RegionRecord.fetchOne(db, key: region.id) else {
                    preconditionFailure("planned update of \(region.id) has no row in the same transaction")
                }
                version = current.version + 1
                try RegionRecord(region: region, version: version, createdAt: current.createdAt, updatedAt: timestamp).update(db)
            case .remove(let id):
                version = (try Int.fetchOne(db, sql: "SELECT version FROM regions WHERE id = ?", arguments: [id]) ?? 0) + 1
                _ = try RegionRecord.deleteOne(db, key: id)
            }
            if origin == .local { try Self.enqueue(change, version: version, now: timestamp, db: db) }
        }
        if !plan.changes.isEmpty { try Self.bumpRegionsRevision(db) }
        for (regionID, reason) in plan.retirements {
            try Self.closeOpenVisits(regionID: regionID, reason: reason, now: timestamp, db: db)
            for hook in retirementHooks {
                try hook(db, regionID, reason)
            }
        }
        return plan
    }

    /// A region edit as a sync mutation. Its key is new for every edit (regions are edited by
    /// people, not derived, so the same content twice is two edits).
    private static func enqueue(_ change: RegionChange, version: Int, now: String, db: Database) throws {
        let edit = UUID().uuidString.prefix(8).lowercased()
        switch change {
        case .add(let region), .update(let region, _, _):
            try enqueue(
                entity: "region", id: region.id, version: version, key: "region:\(region.id):v\(version):\(edit)",
                payload: region.feature.canonicalText(), now: now, db: db)
        case .remove(let id):
            try enqueue(
                entity: "region", id: id, op: .delete, version: version, key: "region:\(id):v\(version):\(edit)", payload: "{}",
                now: now, db: db)
        }
    }

    /// Grows by one on every apply that changes something; a running service compares it to
    /// the revision its monitor was built from.
    public func regionsRevision() throws -> Int64 {
        try writer.read(Self.regionsRevision)
    }

    static func regionsRevision(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT value FROM store_meta WHERE key = 'regions_revision'") ?? 0
    }

    private static func bumpRegionsRevision(_ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO store_meta (key, value) VALUES ('regions_revision', 1)
            ON CONFLICT(key) DO UPDATE SET value = value + 1
            """)
    }

    private static func digests(_ db: Database) throws -> [MonitoredRegionDigest] {
        try Row.fetchAll(db, sql: "SELECT id, content_hash, geometry_hash, enabled FROM regions ORDER BY id").map { row in
            MonitoredRegionDigest(id: row["id"], contentHash: row["content_hash"], geometryHash: row["geometry_hash"], enabled: row["enabled"])
        }
    }
}
