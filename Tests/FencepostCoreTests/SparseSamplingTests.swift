import FencepostCore
import FencepostGeometry
import FencepostTestSupport
import Foundation
import PropertyBased
import Testing

/// "Holding" is measured in time along the interpolated crossings, not by which fix comes next
/// (design, "Monitor semantics"): how often a path was sampled must not decide whether a visit
/// happened. The same piecewise-straight path, sampled every 1 s, 10 s or 60 s, keeps every
/// visit that lasted at least twice the enter delay plus the exit delay.
@Suite struct SparseSamplingTests {
    /// A path whose corners fall on whole minutes, so every sampling interval here (1, 10 and
    /// 60 s) passes through each corner: the straight lines between samples are the path
    /// itself, and only how often it is sampled differs.
    struct Path {
        var regions: [Region]
        /// Metres east and north of the origin at each whole minute.
        var corners: [(x: Double, y: Double)]
        let grid: LocalGrid

        /// The path's position every `step` seconds, as fixes without a reported accuracy
        /// (AIS and many exports report none).
        func sampled(every step: Int) -> [Fix] {
            let duration = (corners.count - 1) * 60
            return stride(from: 0, through: duration, by: step).map { t in
                let leg = min(t / 60, corners.count - 2)
                let fraction = Double(t - leg * 60) / 60
                let (a, b) = (corners[leg], corners[leg + 1])
                return grid.fix(a.x + (b.x - a.x) * fraction, a.y + (b.y - a.y) * fraction, t: Double(t), accuracy: nil)
            }
        }
    }

    /// The regions of ``MonitorReferenceTests/scenario(seed:fixCount:stepScale:)`` (circles,
    /// squares, star-shaped polygons with a hole, 10–130 m across), and a path among them that
    /// moves at 0.5–15 m/s or stops, a corner every minute.
    static func path(seed: UInt64, minutes: Int) -> Path {
        let scenario = MonitorReferenceTests.scenario(seed: seed, fixCount: 1, stepScale: 1)
        let grid = LocalGrid(origin: scenario.fixes[0].position)
        var random = SplitMix64(seed: seed ^ 0x5A1E)
        var x = random.unit() * 400 - 200
        var y = random.unit() * 400 - 200
        var corners = [(x, y)]
        for _ in 0..<minutes {
            let speed = random.unit() < 0.25 ? 0 : 0.5 + random.unit() * 14.5
            let heading = random.unit() * 2 * .pi
            x = min(max(x + cos(heading) * speed * 60, -400), 400)
            y = min(max(y + sin(heading) * speed * 60, -400), 400)
            corners.append((x, y))
        }
        return Path(regions: scenario.regions, corners: corners, grid: grid)
    }

    /// A visit: a region and the time span from its enter to its exit (the trace's end while
    /// still open).
    struct Visit: CustomStringConvertible {
        var region: String
        var enter: Double
        var exit: Double

        var description: String { "\(region) \((enter * 100).rounded() / 100)–\((exit * 100).rounded() / 100)" }
    }

    static func visits(_ events: [MonitorEvent], end: Double) -> [Visit] {
        var open: [String: Double] = [:]
        var visits: [Visit] = []
        for event in events {
            switch event.kind {
            case .enter: open[event.regionID] = event.time
            case .exit:
                visits.append(
                    Visit(
                        region: event.regionID, enter: open.removeValue(forKey: event.regionID) ?? event.time,
                        exit: event.time))
            case .dwell, .overstay, .absent, .overspeed: break
            }
        }
        return visits + open.map { Visit(region: $0.key, enter: $0.value, exit: end) }
    }

    /// The true visits: raw containment (equal to a per-fix containment test) of the path
    /// sampled every second, crossings interpolated on it.
    static func truth(_ path: Path) throws -> [Visit] {
        var raw = try MonitorHarness(regions: path.regions, settings: MonitorHarness.raw)
        let fixes = path.sampled(every: 1)
        try raw.feed(fixes)
        return visits(raw.events, end: fixes.last!.time)
    }

    @Test func sparserSamplingKeepsEveryVisitLongerThanTheDelays() async {
        await propertyCheck(
            count: 120, input: Gen.uint64(in: 0...UInt64.max), Gen.int(in: 5...40), Gen.double(in: 0...30),
            Gen.double(in: 0...60)
        ) { seed, minutes, enterDelay, exitDelay in
            let path = Self.path(seed: seed, minutes: minutes)
            let settings = MonitorSettings(enterDelay: enterDelay, exitDelay: exitDelay)
            do {
                let long = try Self.truth(path).filter { $0.exit - $0.enter >= 2 * enterDelay + exitDelay }
                for step in [1, 10, 60] {
                    var harness = try MonitorHarness(regions: path.regions, settings: settings)
                    let fixes = path.sampled(every: step)
                    try harness.feed(fixes)
                    let found = Self.visits(harness.events, end: fixes.last!.time)
                    // Fixes less than `sparseInterval` apart are a dense trace, where fixes
                    // inside must span the enter delay (one fix may lie): a visit is certain
                    // to be seen when it lasts that long plus a step before and after.
                    let dense = Double(step) < settings.sparseInterval
                    for visit in long where !dense || visit.exit - visit.enter >= enterDelay + 2 * Double(step) {
                        #expect(
                            found.contains {
                                $0.region == visit.region && $0.enter <= visit.exit && $0.exit >= visit.enter
                            },
                            "seed \(seed), delays \(enterDelay)/\(exitDelay) s, a fix every \(step) s: the visit \(visit) is lost; found \(found)"
                        )
                    }
                }
            } catch {
                Issue.record("monitor failed: \(error)")
            }
        }
    }

    /// The harbour of the issue: a vessel reporting once a minute with no accuracy comes in with
    /// a fix 11 m inside a 150 m circle, then lies at the pier with every fix 1–3 m outside it.
    /// It was inside for most of a minute, far longer than the 5 s enter delay, and the fixes
    /// after lie in the band: one open visit, entered where the first segment crossed in.
    @Test func aVesselMooredJustOutsideTheCircleStaysInTheVisit() throws {
        let grid = LocalGrid()
        var harness = try MonitorHarness(regions: [grid.circle("pier", radius: 150)], settings: MonitorSettings())
        let fixes =
            [grid.fix(-400, 0, t: 0, accuracy: nil), grid.fix(-139, 0, t: 60, accuracy: nil)]
            + [151, 153, 152, 151, 153].enumerated().map {
                grid.fix(-Double($0.element), 0, t: 120 + 60 * Double($0.offset), accuracy: nil)
            }
        try harness.feed(fixes)
        // In at x = -150, 11/261 of the way back from t = 60: t ≈ 57.47. One fix inside
        // made the visit (the others are in the band): flagged.
        #expect(harness.summary == ["enter@57.471[single_fix]"])
        #expect(harness.state.memberships["pier"]?.phase == .inside)
        // Beyond the band for longer than the exit delay, it leaves, back-dated to the crossing
        // between t = 60 and 120.
        try harness.feed([grid.fix(-200, 0, t: 480, accuracy: nil), grid.fix(-200, 0, t: 540, accuracy: nil)])
        #expect(harness.summary.count == 2 && harness.events[1].kind == .exit)
        #expect(abs(harness.events[1].time - (60 + 60 * 11.0 / 12)) < 0.01)
    }

    /// A visit waiting for its exit in the band is not over when the next segment goes back
    /// through the region: the exit is back-dated to where that segment left, as a fix inside
    /// would have shown.
    @Test func aSegmentBackThroughTheRegionMovesThePendingExit() throws {
        let grid = LocalGrid()
        var harness = try MonitorHarness(regions: [grid.circle("c", radius: 100)], settings: MonitorSettings())
        // Out to 10 m beyond the west edge (in the band), then across to 10 m beyond the east
        // edge, then away.
        try harness.feed(grid.walk(xs: [0, -110, 110, 200], dt: 60, accuracy: nil))
        // The last outward crossing is at x = 100, 210/220 of the way from t = 60 to 120. Only
        // the first fix was inside: the exit says so.
        #expect(harness.summary == ["enter@0.0", "exit@117.273[single_fix]"])
    }

    /// A U-shaped region, its arms 100 m wide around a notch from x = 100 to 200 m open to the
    /// north, and a segment across both arms at y = 60 (5 m/s, a fix a minute): the raw
    /// monitor keeps the crossing next to the inside fix, as a per-fix containment test sees
    /// it; with pass-throughs on, the far arm, deeper than the fixes' accuracy, is part of the
    /// visit, whichever way the segment goes.
    @Test(arguments: [true, false]) func aSegmentAcrossBothArmsOfAURegion(leaving: Bool) throws {
        let grid = LocalGrid()
        let ring = [(0.0, 0.0), (300, 0), (300, 100), (200, 100), (200, 30), (100, 30), (100, 100), (0, 100), (0, 0)]
            .map { grid.at($0.0, $0.1) }
        let regions = [Region(id: "u", shape: .area(.polygon(PolygonCoordinates(rings: [ring]))))]
        let fixes =
            leaving
            ? [grid.fix(50, 60, t: 0), grid.fix(350, 60, t: 60), grid.fix(650, 60, t: 120)]
            : [grid.fix(350, 60, t: 0), grid.fix(50, 60, t: 60)]
        var raw = try MonitorHarness(regions: regions, settings: MonitorHarness.raw)
        var defaults = try MonitorHarness(regions: regions, settings: MonitorSettings())
        try raw.feed(fixes)
        try defaults.feed(fixes)
        if leaving {
            // Out at x = 100 (t = 10), back in at 200, out at 300 (t = 50).
            #expect(raw.summary == ["enter@0.0", "exit@10.0"])
            #expect(defaults.summary == ["enter@0.0", "exit@50.0[single_fix]"])
        } else {
            // In at x = 300 (t = 10), out at 200, in again at 100 (t = 50).
            #expect(raw.summary == ["enter@50.0"])
            #expect(defaults.summary == ["enter@10.0"])
        }
    }

    /// The inside interval must reach the delay: a shallow dip shorter than it is still no visit,
    /// however the fixes fall.
    @Test func aDipShorterThanTheEnterDelayIsNoVisit() throws {
        let grid = LocalGrid()
        let settings = MonitorSettings(hysteresis: 0, enterDelay: 30, exitDelay: 0, passThrough: false)
        var harness = try MonitorHarness(regions: [grid.circle("c", radius: 100)], settings: settings)
        // In at x = -100 (t ≈ 54.5), out again at t ≈ 65.5: 11 s inside, less than 30.
        try harness.feed(grid.walk(xs: [-150, -95, -150], dt: 60, accuracy: nil))
        #expect(harness.events.isEmpty)
        // 40 s inside (in at t = 40, out at t = 80): a visit.
        var longer = try MonitorHarness(regions: [grid.circle("c", radius: 100)], settings: settings)
        try longer.feed(grid.walk(xs: [-130, -90, -130], dt: 60, accuracy: nil))
        #expect(longer.summary == ["enter@45.0[single_fix]", "exit@75.0[single_fix]"])
    }
}
