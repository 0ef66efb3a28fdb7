import FencepostCore
import FencepostFormats
import FencepostIngest
import FencepostServerTestSupport
import FencepostTestSupport
import Foundation
import GRDB
import Testing

@testable import FencepostStore

/// Outbox rows an ingest writes refer to their event or visit and are rendered when read: what
/// any consumer receives must be byte for byte what the stored copies held before (the golden
/// file was made by the release that stored them), whenever it is read: visits read after
/// they closed still give their open version 1.
@Suite struct OutboxReferenceTests {
    static let fixtures = TestData.packageRoot.appendingPathComponent("Tests/FencepostStoreTests/Fixtures/outbox")
    /// Event and visit rows after the first half of the trace.
    static let rowsAfterFirstHalf = 2_343

    static func file(_ name: String) -> String {
        fixtures.appendingPathComponent(name).path
    }

    /// A (possibly gzip-compressed) fixture's bytes.
    static func bytes(_ name: String) throws -> [UInt8] {
        let source = try ByteSource(path: file(name))
        var bytes: [UInt8] = []
        while let chunk = try source.read() { bytes += chunk }
        return bytes
    }

    struct Expected {
        var seq: Int64
        var mutation: SyncMutation
    }

    static func golden() throws -> [Expected] {
        try String(decoding: bytes("outbox-golden.jsonl.gz"), as: UTF8.self).split(separator: "\n").map { line in
            let row = try JSONParser.parse(Array(line.utf8)).objectValue ?? [:]
            return Expected(
                seq: Int64(row["seq"]?.numberValue ?? 0),
                mutation: SyncMutation(
                    key: row["key"]?.stringValue ?? "", entity: SyncEntity(row["entity"]?.stringValue ?? ""),
                    id: row["id"]?.stringValue ?? "",
                    op: SyncOperation(rawValue: row["op"]?.stringValue ?? "") ?? .delete,
                    version: Int(row["version"]?.numberValue ?? 0),
                    payload: row["payload"]?.stringValue ?? ""))
        }
    }

    /// A store with the fixture's regions and the trace's halves ingested (one, or both).
    static func store(halves: Int) async throws -> Store {
        let store = try await TestStores.fresh()
        let config = try RegionConfigParser().parse(Data(bytes("regions.geojson.gz")), file: "regions.geojson")
        try await store.applyRegions(RegionConfig.merge([config]))
        // No enter delay: the fixture's events then depend on nothing a later monitor rule
        // for pending enters might change.
        let session = try await IngestSession(
            store: store, options: IngestOptions(monitor: MonitorSettings(enterDelay: 0)))
        for half in ["half1.csv.gz", "half2.csv.gz"].prefix(halves) {
            var reader = try TraceOpener.open(file(half), format: nil, device: "trace")
            try await session.ingest { try reader.next() }
        }
        return store
    }

    /// The rows that differ from the golden ones (at most a few, for the message).
    static func differences(_ changes: [SyncChange], _ golden: ArraySlice<Expected>) -> [String] {
        var differences: [String] = []
        if changes.count != golden.count { differences.append("\(changes.count) rows, expected \(golden.count)") }
        for (change, expected) in zip(changes, golden)
        where change.seq != expected.seq || change.mutation != expected.mutation {
            differences.append("seq \(change.seq): \(change.mutation) != \(expected.seq): \(expected.mutation)")
            if differences.count >= 3 { break }
        }
        return differences
    }

    @Test func theFeedGivesWhatTheStoredCopiesHeldAfterEachInput() async throws {
        let golden = try Self.golden()
        for (halves, count) in [(1, Self.rowsAfterFirstHalf), (2, golden.count)] {
            let store = try await Self.store(halves: halves)
            defer { TestStores.closeLater(store) }
            let changes = try await store.syncChanges(
                after: 0, entities: [.event, .visit], device: nil, limit: 100_000)
            #expect(Self.differences(changes, golden.prefix(count)) == [], "after \(halves) half(s)")
            #expect(
                try await store.read { tx in
                    // The regions' rows refer to them too (a region apply's).
                    try await tx.value("SELECT COUNT(*) FROM outbox WHERE payload IS NULL AND entity != 'region'")
                        as Int?
                }
                    == count)
        }
    }

    @Test func pushClaimsAndDeviceConfinedFeedsGiveTheSame() async throws {
        let golden = try Self.golden()
        let store = try await Self.store(halves: 2)
        defer { TestStores.closeLater(store) }
        let claimed = try await store.claimPushBatch(limit: 100_000, maxBytes: .max).filter {
            $0.mutation.entity != .region
        }
        #expect(Self.differences(claimed.map { SyncChange(seq: $0.seq, mutation: $0.mutation) }, golden[...]) == [])
        // A device token reads the regions and its own device's rows, referring or not.
        let own = try await store.syncChanges(after: 0, entities: nil, device: "trace", limit: 100_000)
        #expect(own.count == 400 + golden.count)
        let other = try await store.syncChanges(after: 0, entities: nil, device: "other", limit: 100_000)
        #expect(other.count == 400 && other.allSatisfy { $0.mutation.entity == .region })
    }

    @Test func aNewerVersionFromSyncLeavesTheRowsReferringToTheOldOneAsTheyWere() async throws {
        let golden = try Self.golden()
        let store = try await Self.store(halves: 2)
        defer { TestStores.closeLater(store) }
        // A closed visit and an event of it, replaced by version 3 and 2 from elsewhere.
        let visit = try #require(golden.first { $0.mutation.entity == .visit && $0.mutation.version == 2 })
        let event = try #require(golden.first { $0.mutation.entity == .event })
        var newerVisit = visit.mutation.payload.replacingOccurrences(
            of: #""exit_reason":"exit""#, with: #""exit_reason":"region_removed""#)
        newerVisit = newerVisit.replacingOccurrences(of: #""version":2"#, with: #""version":3"#)
        let results = try await store.applyMutations(
            [
                SyncMutation(
                    key: "visit:\(visit.mutation.id):v3", entity: .visit, id: visit.mutation.id, op: .upsert,
                    version: 3, payload: newerVisit),
                SyncMutation(
                    key: "event:\(event.mutation.id):v2", entity: .event, id: event.mutation.id, op: .upsert,
                    version: 2,
                    payload: event.mutation.payload.replacingOccurrences(of: #""flags":[]"#, with: #""flags":["gap"]"#)),
            ],
            permissions: SyncPermissions(device: nil, regions: true))
        #expect(results == [.applied, .applied])
        let changes = try await store.syncChanges(after: 0, entities: [.event, .visit], device: nil, limit: 100_000)
        #expect(Self.differences(Array(changes.prefix(golden.count)), golden[...]) == [])
        #expect(changes.count == golden.count + 2)
        #expect(
            try await store.read { tx in
                try await tx.value("SELECT COUNT(*) FROM outbox WHERE payload IS NOT NULL AND entity != 'region'")
                    as Int?
            } == 5)  // the visit's two rows and the event's, kept as text, and the two new ones
    }
}
