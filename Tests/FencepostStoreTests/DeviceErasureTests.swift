import FencepostCore
import FencepostFormats
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import FencepostTestSupport
import Foundation
import Testing

/// `devices erase` (design, "history"): afterwards no row of any table names the device, the
/// outbox carries a delete per event and visit, and the other devices' exports are unchanged.
/// On SQLite, and on PostgreSQL in tools/test's second run.
@Suite struct DeviceErasureTests {
    static let erased = "erase-me-4711"
    static let kept = "keeper"

    static func fill(_ store: Store) async throws {
        try await store.applyRegions(try RegionConfigLoader.load([BackendParityTests.regions]))
        for device in [erased, kept] {
            let session = try await IngestSession(store: store)
            var reader = try TraceOpener.open(BackendParityTests.trace, format: nil, device: device)
            try await session.ingest { try reader.next() }
        }
        try await store.editRoster { roster in
            var roster = roster
            for device in [erased, kept] {
                roster.entries[device] = DeviceRoster.Entry(device: device, name: "Van \(device)", groups: ["fleet"])
            }
            return roster
        }
        _ = try await store.createToken(name: "phone-of-\(erased)", scope: .device(erased))
        _ = try await store.createToken(name: "phone-of-\(kept)", scope: .device(kept))
    }

    static func export(_ store: Store, device: String) async throws -> String {
        var sink = StringSink()
        try await EventExport.write(.jsonl, query: EventQuery(device: device), zone: nil, from: store, to: &sink)
        return sink.text
    }

    /// Every table's every value, as text (blobs read as UTF-8, lossily): where a device's name
    /// could hide.
    static func everyValue(_ store: Store) async throws -> [(table: String, text: String)] {
        let listing =
            TestStores.onPostgres
            ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()"
            : "SELECT name FROM sqlite_master WHERE type = 'table'"
        return try await store.read { tx in
            var found: [(String, String)] = []
            for table in try await tx.rows(listing, []).map({ $0["name"] as String }) {
                for row in try await tx.rows("SELECT * FROM \(table)", []) {
                    for value in row.values {
                        switch value {
                        case .text(let text): found.append((table, text))
                        case .blob(let bytes): found.append((table, String(decoding: bytes, as: UTF8.self)))
                        default: break
                        }
                    }
                }
            }
            return found
        }
    }

    @Test func noRowNamesAnErasedDevice() async throws {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await Self.fill(store)
        let keptBefore = try await Self.export(store, device: Self.kept)
        let named = try await Self.everyValue(store).filter { $0.text.contains(Self.erased) }
        #expect(
            Set(named.map(\.table)).isSuperset(of: ["events", "visits", "devices", "roster", "tokens", "fix_history"]))
        let (events, visits) = try await store.read { tx in
            (
                try await tx.rows("SELECT id FROM events WHERE device = ?", [.text(Self.erased)]).count,
                try await tx.rows("SELECT id FROM visits WHERE device = ?", [.text(Self.erased)]).count
            )
        }
        #expect(events > 50 && visits > 20)

        let erasure = try await store.eraseDevice(Self.erased)
        #expect(erasure.removed["events"] == events)
        #expect(erasure.removed["visits"] == visits)
        #expect(erasure.removed["devices"] == 1 && erasure.removed["roster"] == 1 && erasure.removed["tokens"] == 1)
        #expect((erasure.removed["fix_history"] ?? 0) > 0, "its stored fixes")
        #expect((erasure.removed["outbox"] ?? 0) >= events + visits, "every outbox row carrying them")
        #expect(erasure.outboxDeletes == events + visits)

        let left = try await Self.everyValue(store).filter { $0.text.contains(Self.erased) }
        #expect(left.isEmpty, "rows still naming the device: \(left.prefix(5))")
        let deletes = try await store.read { tx in
            try await tx.rows("SELECT entity, payload FROM outbox WHERE op = 'delete'", [])
        }
        #expect(deletes.count == events + visits)
        #expect(deletes.allSatisfy { ($0["payload"] as String) == "{}" })
        #expect(try await Self.export(store, device: Self.kept) == keptBefore, "the other device's events unchanged")

        let again = try await store.eraseDevice(Self.erased)
        #expect(again.isEmpty && again.outboxDeletes == 0)

        // The device may come back: its fixes start it afresh.
        let session = try await IngestSession(store: store)
        var reader = try TraceOpener.open(BackendParityTests.trace, format: nil, device: Self.erased)
        try await session.ingest { try reader.next() }
        #expect(try await Self.export(store, device: Self.erased).split(separator: "\n").count == events)
    }
}
