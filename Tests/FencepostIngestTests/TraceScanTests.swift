import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostIngest
import Testing

/// `scan` without a store: its events, made into rows on a thread of their own, against the
/// pipeline's, and an input that fails half-way.
@Suite struct TraceScanTests {
    static let home = Region(id: "home", shape: .circle(center: Position(lon: 8.0, lat: 47.0), radius: 100))
    static let settings = MonitorSettings(hysteresis: 0, enterDelay: 0, exitDelay: 0, passThrough: false)

    /// A device walking through `home` and back every 200 fixes, a fix a second (7 m/s).
    static func walk(_ count: Int) -> [Fix] {
        (0..<count).map { index in
            let phase = Double(min(index % 200, 200 - index % 200)) / 100
            return Fix(
                device: "d", time: 1_000 + Double(index), lat: 46.9970 + phase * 0.006, lon: 8.0, accuracy: 5)
        }
    }

    /// Gives `fixes` in batches of uneven sizes, throwing `failure` after `failingAfter` fixes.
    static func batches(of fixes: [Fix], failingAfter: Int? = nil) -> () throws -> [Fix]? {
        var start = 0
        var size = 1
        return {
            if let failingAfter, start >= failingAfter { throw TraceReadError(file: "t", line: nil, reason: "bad") }
            guard start < fixes.count else { return nil }
            let end = min(fixes.count, start + size)
            defer { (start, size) = (end, size % 4_999 + 7) }
            return Array(fixes[start..<end])
        }
    }

    /// Past the order's window of 50,000 fixes the input streams: every event is still written,
    /// with the ids the pipeline gives them.
    @Test func writesThePipelinesEvents() throws {
        let fixes = Self.walk(60_000)
        let outcomes = try FixPipeline(regions: [Self.home], monitor: Self.settings).outcomes(of: fixes)
        let expected = outcomes.flatMap { item -> [GeofenceEvent] in
            if case .accepted(let events) = item.outcome { return events }
            return []
        }
        let accepted = outcomes.count { if case .accepted = $0.outcome { true } else { false } }
        #expect(expected.count > 500)
        let scan = try TraceScan(
            regions: [Self.home], monitor: Self.settings, filter: FixFilterSettings(), output: ScanOutput())
        try scan.scan(batches: Self.batches(of: fixes))
        var sink = StringSink()
        try scan.finish(to: &sink)
        let lines = sink.text.split(separator: "\n").dropFirst()
        #expect(lines.count == expected.count)
        let fields = Set(lines.flatMap { $0.split(separator: ",").map(String.init) })
        #expect(Set(expected.map(\.id)).isSubset(of: fields))
        #expect(scan.summary.fixesRead == fixes.count)
        #expect(scan.summary.fixesAccepted == accepted)
        #expect(scan.summary.events.values.reduce(0, +) == expected.count)
    }

    /// An input that fails half-way counts for nothing; the one before it still does.
    @Test func aFailedInputCountsForNothing() throws {
        let fixes = Self.walk(1_000)
        let scan = try TraceScan(
            regions: [Self.home], monitor: Self.settings, filter: FixFilterSettings(), output: ScanOutput())
        try scan.scan(batches: Self.batches(of: Array(fixes[..<500])))
        var alone = StringSink()
        let only = try TraceScan(
            regions: [Self.home], monitor: Self.settings, filter: FixFilterSettings(), output: ScanOutput())
        try only.scan(batches: Self.batches(of: Array(fixes[..<500])))
        try only.finish(to: &alone)
        #expect(throws: TraceReadError.self) {
            try scan.scan(batches: Self.batches(of: Array(fixes[500...]), failingAfter: 300))
        }
        var sink = StringSink()
        try scan.finish(to: &sink)
        #expect(sink.text == alone.text)
        #expect(scan.summary.fixesRead == 500)
    }
}
