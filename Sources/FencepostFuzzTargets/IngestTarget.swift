import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostIngest
import FencepostStore
import Foundation

/// A trace file through the whole ingest: reader, time order, filter, monitor, visit tracker
/// and the store's writes (events, visits, outbox, device states), in memory.
///
/// The first byte chooses the format (one of ``TraceFormat``, or detection from the content);
/// the rest is the file. Each input is ingested twice: the second time every fix is already
/// seen, so it must add no event. What the store holds must be whole: every event finite and
/// in range, every closed visit exited at or after its enter.
enum IngestTarget {
    /// Regions where the corpus's traces go: the world's land between the polar circles, a
    /// 1,000 km circle over central Europe, and small ones where hand-written traces sit.
    static let regions: [Region] = [
        Region(
            id: "world",
            shape: .area(
                .polygon(
                    PolygonCoordinates(rings: [
                        [
                            Position(lon: -179, lat: -66), Position(lon: 179, lat: -66), Position(lon: 179, lat: 66),
                            Position(lon: -179, lat: 66), Position(lon: -179, lat: -66),
                        ]
                    ])))),
        Region(id: "europe", shape: .circle(center: Position(lon: 8, lat: 47), radius: 1_000_000)),
        Region(id: "small", shape: .circle(center: Position(lon: 8, lat: 47), radius: 50)),
        Region(id: "limerick", shape: .circle(center: Position(lon: -8.62, lat: 52.66), radius: 60)),
    ]

    /// The store, made again every few hundred inputs so memory stays bounded over a long run.
    private static let state = StoreCycle()

    static func run(_ bytes: [UInt8]) async -> FuzzOutcome {
        guard let selector = bytes.first else { return .refused }
        let formats: [TraceFormat?] = [nil] + TraceFormat.allCases
        let format = formats[Int(selector) % formats.count]
        let file = Array(bytes.dropFirst())
        do {
            let store = try await state.store()
            let first = try await ingest(file, format: format, store: store)
            let second = try await ingest(file, format: format, store: store)
            if second.events.values.reduce(0, +) != 0 {
                violated("the same file ingested twice made events the second time: \(second.events)")
            }
            try await check(store)
            return .accepted(first.fixesRead)
        } catch let violation as Violation {
            violated(violation.promise)
        } catch {
            return .refused
        }
    }

    private static func ingest(_ file: [UInt8], format: TraceFormat?, store: Store) async throws -> IngestSummary {
        let session = try await IngestSession(store: store)
        var reader = try TraceOpener.open(TraceTargets.chunkedSource(file), format: format, device: nil)
        try await session.ingest { try reader.next() }
        session.addSkipped(reader.skipped)
        return session.summary
    }

    /// What the store must hold after any input.
    private static func check(_ store: Store) async throws {
        try await store.forEachEvent(EventQuery()) { event in
            guard event.timeMs >= 0, event.timeMs <= 4_102_444_800_000 else {
                throw Violation(promise: "an event outside the files' time range: \(event.time)")
            }
            if let lat = event.lat, !(abs(lat) <= 90) { throw Violation(promise: "an event at latitude \(lat)") }
            if let lon = event.lon, !(abs(lon) <= 180) { throw Violation(promise: "an event at longitude \(lon)") }
        }
        try await store.forEachVisit { visit in
            if let exited = visit.exitedMs, exited < visit.enteredMs {
                throw Violation(
                    promise: "visit \(visit.id) exits at \(visit.exitedAt ?? ""), before its enter \(visit.enteredAt)")
            }
        }
    }

    struct Violation: Error {
        var promise: String
    }
}

/// A store in memory with ``IngestTarget/regions``, made again after every `every` uses.
actor StoreCycle {
    private var current: Store?
    private var uses = 0
    private let every = 200

    func store() async throws -> Store {
        uses += 1
        if let current, uses % every != 0 { return current }
        let store = try Store.inMemory()
        try await store.applyRegions(IngestTarget.regions)
        current = store
        return store
    }
}
