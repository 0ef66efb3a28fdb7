import FencepostGeometry
import FencepostTestSupport
import Foundation
import PropertyBased
import Testing

@testable import FencepostCore

/// The design's reference: with h = 0, no delays and no pass-through, the enter/exit sequence
/// per region equals a brute-force per-fix containment test.
@Suite struct MonitorReferenceTests {
    struct Scenario {
        var regions: [Region]
        var fixes: [Fix]
    }

    /// Random circles and polygons (some with holes) around an origin, and a random walk with
    /// steps from 0.5 m to `stepScale` metres, so fixes sit on, near and far from boundaries.
    static func scenario(seed: UInt64, fixCount: Int, stepScale: Double) -> Scenario {
        var random = SplitMix64(seed: seed)
        let grid = LocalGrid(origin: Position(lon: -8.6 + random.unit() * 20, lat: 40 + random.unit() * 20))
        var regions: [Region] = []
        for index in 0..<(3 + Int(random.unit() * 6)) {
            let x = random.unit() * 400 - 200
            let y = random.unit() * 400 - 200
            let size = 10 + random.unit() * 120
            switch index % 3 {
            case 0:
                regions.append(grid.circle("c\(index)", x: x, y: y, radius: size))
            case 1:
                regions.append(grid.square("s\(index)", x: x, y: y, half: size))
            default:
                // A star-shaped polygon with a square hole.
                let points = 5 + Int(random.unit() * 12)
                var ring = (0..<points).map { k -> Position in
                    let angle = 2 * Double.pi * Double(k) / Double(points)
                    let radius = size * (0.6 + 0.4 * random.unit())
                    return grid.at(x + radius * cos(angle), y + radius * sin(angle))
                }
                ring.append(ring[0])
                let hole = [
                    grid.at(x - 3, y - 3), grid.at(x - 3, y + 3), grid.at(x + 3, y + 3), grid.at(x + 3, y - 3),
                    grid.at(x - 3, y - 3),
                ]
                regions.append(
                    Region(id: "p\(index)", shape: .area(.polygon(PolygonCoordinates(rings: [ring, hole])))))
            }
        }
        var x = random.unit() * 200 - 100
        var y = random.unit() * 200 - 100
        var heading = random.unit() * 2 * .pi
        var fixes: [Fix] = []
        for step in 0..<fixCount {
            heading += (random.unit() - 0.5) * 1.5
            let length = 0.5 + random.unit() * stepScale
            x = min(max(x + cos(heading) * length, -300), 300)
            y = min(max(y + sin(heading) * length, -300), 300)
            fixes.append(grid.fix(x, y, t: Double(step) * (1 + random.unit() * 30)))
        }
        // Times must increase.
        for index in fixes.indices.dropFirst() where fixes[index].time <= fixes[index - 1].time {
            fixes[index].time = fixes[index - 1].time + 0.5
        }
        return Scenario(regions: regions, fixes: fixes)
    }

    /// Containment straight from the definitions: haversine for circles, GEOS covers for areas.
    static func bruteForce(_ scenario: Scenario) throws -> [String: [EventKind]] {
        let context = GEOSContext()
        var result: [String: [EventKind]] = [:]
        for region in scenario.regions {
            let inside: (Position) throws -> Bool
            switch region.shape {
            case .circle(let center, let radius):
                inside = { Geodesy.distance(center, $0) <= radius }
            case .area, .corridor:
                let prepared = try Geometry(shape: region.shape.polygonal!, context: context).prepared()
                inside = { try prepared.covers(x: $0.lon, y: $0.lat) }
            }
            var was = false
            var kinds: [EventKind] = []
            for fix in scenario.fixes {
                let now = try inside(fix.position)
                if now != was { kinds.append(now ? .enter : .exit) }
                was = now
            }
            if !kinds.isEmpty { result[region.id] = kinds }
        }
        return result
    }

    /// Besides the sequence, every event's time lies between the two fixes around its crossing
    /// (or is the first fix's), and its place and time are where and when the segment crosses
    /// the boundary by an independent computation (``CrossingOracle``): the time linear along
    /// the segment at that point.
    @Test func rawMonitorEqualsBruteForceContainment() async {
        await propertyCheck(
            count: 150, input: Gen.uint64(in: 0...UInt64.max), Gen.int(in: 10...600), Gen.double(in: 1...80)
        ) { seed, count, scale in
            let scenario = Self.scenario(seed: seed, fixCount: count, stepScale: scale)
            do {
                var harness = try MonitorHarness(regions: scenario.regions, settings: MonitorHarness.raw)
                // Fix by fix, so each event is known to come from the segment ending at its fix.
                var segmentEnds: [Int] = []
                for (index, fix) in scenario.fixes.enumerated() {
                    try harness.feed([fix])
                    segmentEnds += repeatElement(index, count: harness.events.count - segmentEnds.count)
                }
                let monitored = Dictionary(grouping: harness.events, by: \.regionID).mapValues { $0.map(\.kind) }
                #expect(monitored == (try Self.bruteForce(scenario)))
                let oracle = try CrossingOracle(regions: scenario.regions)
                for (event, end) in zip(harness.events, segmentEnds) {
                    try oracle.check(event, fixes: scenario.fixes, segmentEnd: end, seed: seed)
                }
                for events in Dictionary(grouping: harness.events, by: \.regionID).values {
                    #expect(zip(events, events.dropFirst()).allSatisfy { $0.time <= $1.time })
                }
            } catch {
                Issue.record("monitor failed: \(error)")
            }
        }
    }

    /// A 1 Hz trace with GPS-like noise (about 6 m) around a path that stops and goes at up to
    /// 15 m/s, among the scenario's regions: fixes jitter across boundaries and sit in pending
    /// enters and exits, where the discs answer for the band and the delays.
    static func noisyTrace(seed: UInt64, fixCount: Int) -> Scenario {
        var scenario = scenario(seed: seed, fixCount: 1, stepScale: 1)
        var random = SplitMix64(seed: seed ^ 0x5EED)
        let grid = LocalGrid(origin: scenario.fixes[0].position)
        var x = 0.0
        var y = 0.0
        var heading = random.unit() * 2 * .pi
        var speed = 0.0
        func noise() -> Double { (0..<4).reduce(0) { sum, _ in sum + random.unit() - 0.5 } * 10.4 }
        scenario.fixes = (0..<fixCount).map { step in
            if random.unit() < 0.02 { speed = [0, 0, 1.4, 5, 15][Int(random.unit() * 5)] }
            heading += (random.unit() - 0.5) * 0.3
            x = min(max(x + cos(heading) * speed, -250), 250)
            y = min(max(y + sin(heading) * speed, -250), 250)
            let accuracy: Double? = random.unit() < 0.1 ? nil : 3 + random.unit() * 20
            return grid.fix(x + noise(), y + noise(), t: Double(step), accuracy: accuracy)
        }
        return scenario
    }

    /// The discs only skip work: with the default settings (band, delays, pass-through; a dwell
    /// for half the seeds) the events equal those of testing every candidate exactly at every fix.
    @Test func discsChangeNoEvent() async {
        await propertyCheck(count: 100, input: Gen.uint64(in: 0...UInt64.max), Gen.int(in: 10...1_500), Gen.bool()) {
            seed, count, noisy in
            let scenario =
                noisy
                ? Self.noisyTrace(seed: seed, fixCount: count)
                : Self.scenario(seed: seed, fixCount: count, stepScale: 40)
            let settings = MonitorSettings(dwell: seed % 2 == 0 ? 60 : nil)
            do {
                var withDiscs = try MonitorHarness(regions: scenario.regions, settings: settings)
                var exact = try MonitorHarness(regions: scenario.regions, settings: settings)
                exact.monitor.usesDiscs = false
                try withDiscs.feed(scenario.fixes)
                try exact.feed(scenario.fixes)
                #expect(withDiscs.events == exact.events, "seed \(seed), \(count) fixes, noisy: \(noisy)")
                #expect(withDiscs.state == exact.state, "seed \(seed)")
            } catch {
                Issue.record("monitor failed: \(error)")
            }
        }
    }

    /// A region's distances use its own longitude scale, from its middle's latitude; a fix
    /// nearer the pole has a smaller one. For a region a degree of latitude tall at 75° that
    /// is 2.7 % apart at its northern edge, more than the discs' flat-earth margin: the discs
    /// must still change no event, for a small polygon and a large one (GEOS) alike.
    @Test(arguments: [4, 200]) func discsHoldNearThePoleOfALargeRegion(verticesPerSide: Int) throws {
        let edge = (0..<verticesPerSide).map { Double($0) / Double(verticesPerSide) }
        var ring = edge.map { Position(lon: 10 + 4 * $0, lat: 74.5) } + edge.map { Position(lon: 14, lat: 74.5 + $0) }
        ring += edge.map { Position(lon: 14 - 4 * $0, lat: 75.5) } + edge.map { Position(lon: 10, lat: 75.5 - $0) }
        ring.append(ring[0])
        let regions = [Region(id: "north", shape: .area(.polygon(PolygonCoordinates(rings: [ring]))))]
        // Eastwards across the eastern edge at 75.4°, from 100 m inside, half a metre a second.
        let grid = LocalGrid(origin: Position(lon: 14, lat: 75.4))
        let fixes = (0..<400).map { grid.fix(-100 + Double($0) * 0.5, 0, t: Double($0), accuracy: 3) }
        var withDiscs = try MonitorHarness(regions: regions, settings: MonitorHarness.raw)
        var exact = try MonitorHarness(regions: regions, settings: MonitorHarness.raw)
        exact.monitor.usesDiscs = false
        try withDiscs.feed(fixes)
        try exact.feed(fixes)
        #expect(exact.summary == ["enter@0.0", "exit@200.0"])
        #expect(withDiscs.events == exact.events)
    }

    @Test func defaultSettingsGiveWellFormedVisits() async {
        await propertyCheck(
            count: 80, input: Gen.uint64(in: 0...UInt64.max), Gen.int(in: 10...600), Gen.double(in: 1...80)
        ) { seed, count, scale in
            let scenario = Self.scenario(seed: seed, fixCount: count, stepScale: scale)
            do {
                var harness = try MonitorHarness(regions: scenario.regions, settings: MonitorSettings())
                try harness.feed(scenario.fixes)
                let first = scenario.fixes.first!.time
                let last = scenario.fixes.last!.time
                for events in Dictionary(grouping: harness.events, by: \.regionID).values {
                    let kinds = events.map(\.kind).filter { $0 != .dwell }
                    // enter, exit, enter, exit, ... possibly ending with an open enter.
                    #expect(kinds.enumerated().allSatisfy { $0.element == ($0.offset % 2 == 0 ? .enter : .exit) })
                    #expect(zip(events, events.dropFirst()).allSatisfy { $0.time <= $1.time })
                    #expect(events.allSatisfy { $0.time >= first && $0.time <= last })
                }
            } catch {
                Issue.record("monitor failed: \(error)")
            }
        }
    }
}

/// Where a segment between two fixes crosses a region's boundary, computed apart from the
/// monitor: for a polygon, GEOS's intersection of the segment with the polygon's boundary
/// (planar in lon/lat, as containment is); for a circle, the segment–circle solution in an
/// equirectangular projection centred on the circle, and the haversine distance to confirm it.
struct CrossingOracle {
    private let context = GEOSContext()
    private var boundaries: [String: Geometry] = [:]
    private var circles: [String: (center: Position, radius: Double)] = [:]

    init(regions: [Region]) throws {
        for region in regions {
            switch region.shape {
            case .circle(let center, let radius): circles[region.id] = (center, radius)
            case .area, .corridor:
                boundaries[region.id] = try Geometry(shape: region.shape.polygonal!, context: context).boundary()
            }
        }
    }

    /// Checks an enter or exit the raw monitor gave on the segment ending at `fixes[segmentEnd]`.
    func check(_ event: MonitorEvent, fixes: [Fix], segmentEnd: Int, seed: UInt64) throws {
        let b = fixes[segmentEnd]
        let position = try #require(event.position, "seed \(seed): an \(event.kind) without a place")
        guard segmentEnd > 0 else {
            #expect(
                event.kind == .enter && event.time == b.time && position == b.position,
                "seed \(seed): the first fix's enter")
            return
        }
        let a = fixes[segmentEnd - 1]
        #expect(
            a.time <= event.time && event.time <= b.time,
            "seed \(seed): \(event.kind) at \(event.time) outside [\(a.time), \(b.time)]")
        // Fixes more than max_gap apart: no interpolation, the inside fix's time and place.
        if b.time - a.time > MonitorSettings().maxGap {
            let inside = event.kind == .enter ? b : a
            #expect(
                event.flags == .gap && event.time == inside.time && position == inside.position,
                "seed \(seed): across a gap")
            return
        }
        #expect(event.flags.isEmpty, "seed \(seed): interpolated, not flagged")
        let fractions = try crossings(event.regionID, from: a.position, to: b.position)
        try #require(
            !fractions.isEmpty, "seed \(seed): the segment of an \(event.kind) in \(event.regionID) crosses no boundary"
        )
        // Entering: the last crossing before the inside fix; leaving: the first after the inside one.
        let fraction = min(max(event.kind == .enter ? fractions.max()! : fractions.min()!, 0), 1)
        let expected = Position(lon: a.lon + (b.lon - a.lon) * fraction, lat: a.lat + (b.lat - a.lat) * fraction)
        #expect(
            Geodesy.distance(position, expected) < 0.01,
            "seed \(seed): \(event.kind) in \(event.regionID) at \(position), crossing at \(expected)")
        let length = Geodesy.distance(a.position, b.position)
        let span = b.time - a.time
        let time = a.time + fraction * span
        #expect(
            abs(event.time - time) <= 1e-3 + span * 0.01 / max(length, 0.01),
            "seed \(seed): \(event.kind) at \(event.time), crossing at \(time)")
        if let circle = circles[event.regionID] {
            #expect(
                abs(Geodesy.distance(circle.center, position) - circle.radius) < 0.01, "seed \(seed): on the circle")
        }
    }

    /// The fractions along a → b at which it meets the region's boundary.
    func crossings(_ region: String, from a: Position, to b: Position) throws -> [Double] {
        if let circle = circles[region] {
            // Metres east and north of the centre; |p + t (q − p)| = r, for t in [0, 1] (give or
            // take a millimetre's worth, where the sphere and the plane disagree).
            let north = 6_371_008.8 * .pi / 180
            let east = north * cos(circle.center.lat * .pi / 180)
            let (px, py) = ((a.lon - circle.center.lon) * east, (a.lat - circle.center.lat) * north)
            let (dx, dy) = ((b.lon - a.lon) * east, (b.lat - a.lat) * north)
            let qa = dx * dx + dy * dy
            let qb = 2 * (px * dx + py * dy)
            let qc = px * px + py * py - circle.radius * circle.radius
            let discriminant = qb * qb - 4 * qa * qc
            guard qa > 0, discriminant >= 0 else { return [] }
            let slack = 0.001 / qa.squareRoot()
            return [(-qb - discriminant.squareRoot()) / (2 * qa), (-qb + discriminant.squareRoot()) / (2 * qa)]
                .filter { $0 >= -slack && $0 <= 1 + slack }
        }
        let boundary = try #require(boundaries[region])
        let segment = try Geometry(wkt: "LINESTRING (\(a.lon) \(a.lat), \(b.lon) \(b.lat))", context: context)
        let points = try Self.coordinates(segment.intersection(with: boundary).wkt())
        let (dx, dy) = (b.lon - a.lon, b.lat - a.lat)
        return points.map { (($0.lon - a.lon) * dx + ($0.lat - a.lat) * dy) / (dx * dx + dy * dy) }
    }

    /// Every coordinate pair of a geometry's well-known text (points, lines, collections).
    static func coordinates(_ wkt: String) -> [Position] {
        let numbers = wkt.split { !"0123456789.-+eE".contains($0) }.compactMap { Double($0) }
        return stride(from: 0, to: numbers.count - 1, by: 2).map { Position(lon: numbers[$0], lat: numbers[$0 + 1]) }
    }
}
