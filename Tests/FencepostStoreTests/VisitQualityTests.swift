import FencepostCore
import FencepostGeometry
import FencepostIngest
import FencepostServerTestSupport
import FencepostStore
import FencepostTestSupport
import Foundation
import Testing

/// The quality benchmark (tools/bench/quality) in small, so a change that breaks event quality
/// fails the suite and not only a benchmark: a generated workload like
/// ../shared/bench/gen_workload.py's (written again here, so it needs nothing beside the
/// checkout), ingested with the defaults, scored as eval_visits.py scores it against the
/// truth, the visits that a containment test finds on the noiseless path.
@Suite struct VisitQualityTests {
    @Test func theDefaultsFindTheVisitsOfANoisyTrace() async throws {
        let workload = Workload(seed: 3, regions: 80, fixes: 30_000, sizeKilometres: 4)
        let truth = try workload.truth()
        #expect(truth.filter { $0.end - $0.start >= 60 }.count > 100, "enough visits to score")

        let score = await VisitScore(
            truth: truth, candidates: try workload.ingest(IngestOptions()), minimumDuration: 60)
        #expect(score.f1 >= 0.95, "defaults: \(score)")
        // The trace is noisy enough for the score to mean something: raw containment flaps.
        let raw = MonitorSettings(hysteresis: 0, enterDelay: 0, exitDelay: 0, passThrough: false)
        let flapping = await VisitScore(
            truth: truth, candidates: try workload.ingest(IngestOptions(monitor: raw)), minimumDuration: 60)
        #expect(flapping.f1 < 0.8, "raw containment: \(flapping)")
    }
}

/// A visit: a region, and when it was entered and left (the trace's end for one left open).
struct ScoredVisit: Equatable {
    var region: String
    var start: Double
    var end: Double
}

/// Regions scattered over a square (a third circles, the rest star-shaped polygons, 40 m to
/// 1.5 km across, log-uniform), and a 1 Hz walk among them with momentum, speed regimes
/// (standing, walking, cycling, driving) and stops, reported with Gaussian noise (6 m) and
/// an accuracy around it, as gen_workload.py makes them. Deterministic for a seed.
struct Workload {
    let regions: [Region]
    /// The path, and the fixes reported along it.
    let clean: [Position]
    let fixes: [Fix]
    static let start = 1_748_757_600.0  // 2025-06-01T06:00:00Z

    init(seed: UInt64, regions count: Int, fixes fixCount: Int, sizeKilometres: Double) {
        var random = SplitMix64(seed: seed)
        func uniform(_ low: Double, _ high: Double) -> Double { low + (high - low) * random.unit() }
        func gauss(_ sigma: Double) -> Double {
            sigma * (-2 * log(1 - random.unit())).squareRoot() * cos(2 * .pi * random.unit())
        }
        let projection = LocalProjection(origin: Position(lon: 13.40, lat: 52.52))
        let half = sizeKilometres * 500

        regions = (0..<count).map { index in
            let (x, y) = (uniform(-half, half), uniform(-half, half))
            let radius = exp(uniform(log(40), log(1500)))
            if index % 3 == 0 {
                return Region(id: "c\(index)", shape: .circle(center: projection.unproject(x: x, y: y), radius: radius))
            }
            let corners = 6 + Int(random.unit() * 43)
            var ring = (0..<corners).map { corner -> Position in
                let angle = 2 * Double.pi * Double(corner) / Double(corners)
                let reach = radius * uniform(0.55, 1)
                return projection.unproject(x: x + reach * cos(angle), y: y + reach * sin(angle))
            }
            ring.append(ring[0])
            return Region(id: "p\(index)", shape: .area(.polygon(PolygonCoordinates(rings: [ring]))))
        }

        var (x, y, heading, speed, stop) = (0.0, 0.0, uniform(0, 2 * .pi), 1.4, 0)
        var clean: [Position] = []
        var fixes: [Fix] = []
        for second in 0..<fixCount {
            if stop > 0 {
                stop -= 1
            } else {
                if random.unit() < 0.002 {
                    speed = [0, 1.4, 4, 12, 25][Int(random.unit() * 5)]
                    if speed == 0 { stop = 60 + Int(random.unit() * 1741) }
                }
                heading += gauss(0.08)
                x += speed * cos(heading)
                y += speed * sin(heading)
                if abs(x) > half || abs(y) > half {
                    heading += .pi
                    (x, y) = (min(max(x, -half), half), min(max(y, -half), half))
                }
            }
            let reported = projection.unproject(x: x + gauss(6), y: y + gauss(6))
            clean.append(projection.unproject(x: x, y: y))
            fixes.append(
                Fix(
                    device: "walker", time: Self.start + Double(second), lat: reported.lat, lon: reported.lon,
                    accuracy: abs(6 + gauss(2)) + 3))
        }
        self.clean = clean
        self.fixes = fixes
    }

    /// The visits a per-fix containment test finds on the noiseless path: haversine distance
    /// for circles, GEOS's covers for polygons (boundary inside).
    func truth() throws -> [ScoredVisit] {
        let context = GEOSContext()
        var visits: [ScoredVisit] = []
        for region in regions {
            let inside: (Position) throws -> Bool
            switch region.shape {
            case .circle(let center, let radius):
                inside = { Geodesy.distance(center, $0) <= radius }
            case .area(let shape):
                let prepared = try Geometry(shape: shape, context: context).prepared()
                let box = shape.bounds
                inside = { box.contains(x: $0.lon, y: $0.lat) ? try prepared.covers(x: $0.lon, y: $0.lat) : false }
            case .corridor:
                Issue.record("the quality workload has no corridors")
                return []
            }
            var entered: Double?
            for (second, position) in clean.enumerated() {
                let time = Self.start + Double(second)
                switch (try inside(position), entered) {
                case (true, nil): entered = time
                case (false, let start?):
                    visits.append(ScoredVisit(region: region.id, start: start, end: time))
                    entered = nil
                default: break
                }
            }
            if let entered {
                visits.append(ScoredVisit(region: region.id, start: entered, end: Self.start + Double(clean.count)))
            }
        }
        return visits
    }

    /// The visits `fencepost ingest` with these options finds in the noisy fixes, from the
    /// events it stores (as eval_visits.py reads an export: enter to exit, per region).
    func ingest(_ options: IngestOptions) async throws -> [ScoredVisit] {
        let store = try await TestStores.fresh()
        defer { TestStores.closeLater(store) }
        try await store.applyRegions(regions)
        let session = try await IngestSession(store: store, options: options)
        try await session.ingest(fixes)
        var events: [(time: Double, entering: Bool, region: String)] = []
        try await store.forEachEvent(EventQuery()) { event in
            guard event.kind == "enter" || event.kind == "exit", let region = event.region else { return }
            events.append((Double(event.timeMs) / 1000, event.kind == "enter", region))
        }
        // Exits before enters at the same time, as the evaluator sorts them.
        events.sort { ($0.time, $0.entering ? 1 : 0, $0.region) < ($1.time, $1.entering ? 1 : 0, $1.region) }
        let end = (events.map(\.time).max() ?? 0) + 1
        var open: [String: Double] = [:]
        var visits: [ScoredVisit] = []
        for event in events {
            if event.entering {
                if open[event.region] == nil { open[event.region] = event.time }
            } else if let start = open.removeValue(forKey: event.region) {
                visits.append(ScoredVisit(region: event.region, start: start, end: event.time))
            }
        }
        visits += open.map { ScoredVisit(region: $0.key, start: $0.value, end: end) }
        return visits
    }
}

/// Visit precision, recall and F1 as eval_visits.py computes them: a candidate matches a truth
/// visit of the same region whose span it overlaps (greedily, largest overlap first); truth
/// visits shorter than `minimumDuration` are neither required nor held against a candidate
/// that overlaps one.
struct VisitScore: CustomStringConvertible {
    var precision: Double
    var recall: Double
    var f1: Double

    init(truth all: [ScoredVisit], candidates: [ScoredVisit], minimumDuration: Double) {
        let truth = all.filter { $0.end - $0.start >= minimumDuration }
        let short = Dictionary(grouping: all.filter { $0.end - $0.start < minimumDuration }, by: \.region)
        let truthByRegion = Dictionary(grouping: truth.indices, by: { truth[$0].region })
        var pairs: [(overlap: Double, truth: Int, candidate: Int)] = []
        for (j, candidate) in candidates.enumerated() {
            for i in truthByRegion[candidate.region] ?? [] {
                let overlap = min(truth[i].end, candidate.end) - max(truth[i].start, candidate.start)
                if overlap > 0 || (overlap == 0 && truth[i].start == candidate.start) { pairs.append((overlap, i, j)) }
            }
        }
        pairs.sort { ($0.overlap, $0.truth, $0.candidate) > ($1.overlap, $1.truth, $1.candidate) }
        var usedTruth = Set<Int>()
        var usedCandidates = Set<Int>()
        for pair in pairs where !usedTruth.contains(pair.truth) && !usedCandidates.contains(pair.candidate) {
            usedTruth.insert(pair.truth)
            usedCandidates.insert(pair.candidate)
        }
        let matched = Double(usedCandidates.count)
        let ignored = candidates.indices.filter { j in
            !usedCandidates.contains(j)
                && (short[candidates[j].region] ?? []).contains {
                    min($0.end, candidates[j].end) - max($0.start, candidates[j].start) >= 0
                }
        }.count
        let scored = Double(candidates.count - ignored)
        precision = scored > 0 ? matched / scored : 0
        recall = truth.isEmpty ? 0 : matched / Double(truth.count)
        f1 = precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0
    }

    var description: String {
        String(format: "precision %.4f, recall %.4f, F1 %.4f", precision, recall, f1)
    }
}
