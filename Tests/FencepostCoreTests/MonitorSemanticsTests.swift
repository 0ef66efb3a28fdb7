import FencepostCore
import FencepostGeometry
import Foundation
import Testing

@Suite struct MonitorSemanticsTests {
    let grid = LocalGrid()

    @Test func crossingTimesAreInterpolatedOnTheBoundary() throws {
        // 1 fix per 10 s at 1 m/s along x through a 50 m circle: crossings at x = ±50.
        var harness = try MonitorHarness(regions: [grid.circle("c", radius: 50)], settings: MonitorHarness.raw)
        try harness.feed(grid.walk(xs: stride(from: -95.0, through: 95, by: 10).map { $0 }, dt: 10))
        #expect(harness.events.map(\.kind) == [.enter, .exit])
        // x = -95 at t = 0, so x = -50 at t = 45 and x = 50 at t = 145.
        #expect(abs(harness.events[0].time - 45) < 0.05)
        #expect(abs(harness.events[1].time - 145) < 0.05)
        #expect(harness.events.allSatisfy { $0.flags.isEmpty })
    }

    @Test func polygonCrossingsAreInterpolatedToo() throws {
        var harness = try MonitorHarness(regions: [grid.square("sq", half: 40)], settings: MonitorHarness.raw)
        try harness.feed(grid.walk(xs: [-100, -35, 35, 100], dt: 13))
        #expect(harness.events.map(\.kind) == [.enter, .exit])
        // -100 → -35 over 13 s crosses -40 at 12 s; 35 → 100 crosses 40 at 26 + 1 s.
        #expect(abs(harness.events[0].time - 12) < 0.01)
        #expect(abs(harness.events[1].time - 27) < 0.01)
    }

    @Test func jitterInsideTheBandDoesNotFlap() throws {
        let settings = MonitorSettings(hysteresis: 20, enterDelay: 0, exitDelay: 0, passThrough: false)
        var harness = try MonitorHarness(regions: [grid.circle("c", radius: 50)], settings: settings)
        // In, then jitter between 45 and 65 m (band is 50...70), then well out.
        try harness.feed(grid.walk(xs: [0, 45, 55, 48, 65, 49, 62, 80, 90]))
        // The exit is back-dated to the final outward crossing: x = 50 between x = 49 (t = 5)
        // and x = 62 (t = 6), at t = 5 + 1/13.
        #expect(harness.summary == ["enter@0.0", "exit@5.077"])
    }

    @Test func shortExcursionsDoNotSurviveTheExitDelay() throws {
        let settings = MonitorSettings(hysteresis: 10, enterDelay: 0, exitDelay: 10, passThrough: false)
        var harness = try MonitorHarness(regions: [grid.circle("c", radius: 50)], settings: settings)
        // Out beyond the band for 3 s, back in, then out for good.
        try harness.feed(
            grid.walk(xs: [0, 40, 70, 75, 70, 40, 30, 40, 70, 80, 90, 90, 90, 90, 90, 90, 90, 90, 90, 90]))
        #expect(harness.events.map(\.kind) == [.enter, .exit])
        // Final outward crossing between x = 40 (t = 7) and 70 (t = 8): x = 50 at t = 7 + 1/3.
        #expect(abs(harness.events[1].time - (7 + 1.0 / 3)) < 0.01)
    }

    @Test func enterDelayNeedsTheInsideStateToHold() throws {
        let settings = MonitorSettings(hysteresis: 0, enterDelay: 5, exitDelay: 0, passThrough: false)
        var harness = try MonitorHarness(regions: [grid.circle("c", radius: 50)], settings: settings)
        // A 2 s dip just inside (shallower than the accuracy) is not a visit; staying is.
        try harness.feed(grid.walk(xs: [-60, -48, -47, -60, -60, -45, -40, -30, -20, -10, 0, 0], accuracy: 10))
        #expect(harness.events.map(\.kind) == [.enter])
        // The enter keeps its crossing time (between t = 4 and 5), not the confirmation time.
        #expect(harness.events[0].time > 4 && harness.events[0].time < 5)
    }

    @Test func aSingleDeepFixOnASparseTraceIsAVisit() throws {
        let settings = MonitorSettings(hysteresis: 20, enterDelay: 120, exitDelay: 120, passThrough: false)
        var harness = try MonitorHarness(regions: [grid.circle("c", radius: 200)], settings: settings)
        // One fix a minute: outside, deep inside once, then outside until the exit delay has held.
        try harness.feed(grid.walk(xs: [-500, 0, 500, 600], dt: 60, accuracy: 30))
        #expect(harness.events.map(\.kind) == [.enter])
        try harness.feed([grid.fix(700, 0, t: 240, accuracy: 30)])
        #expect(harness.events.map(\.kind) == [.enter, .exit])
        // Back-dated to the crossing at x = 200, between t = 60 and 120.
        #expect(abs(harness.events[1].time - 84) < 0.01)
        // A shallow single fix is not enough under the enter delay.
        var shallow = try MonitorHarness(regions: [grid.circle("c", radius: 200)], settings: settings)
        try shallow.feed(grid.walk(xs: [-500, -190, -500], dt: 60, accuracy: 30))
        #expect(shallow.events.isEmpty)
    }

    @Test func gapsUseTheInsideFixTimesAndAreFlagged() throws {
        var harness = try MonitorHarness(regions: [grid.circle("c", radius: 50)], settings: MonitorHarness.raw)
        try harness.feed([
            grid.fix(-100, 0, t: 0), grid.fix(0, 0, t: 2000), grid.fix(10, 0, t: 2010), grid.fix(100, 0, t: 4000),
        ])
        #expect(harness.summary == ["enter@2000.0[gap]", "exit@2010.0[gap]"])
    }

    @Test func passThroughBetweenTwoOutsideFixes() throws {
        let settings = MonitorSettings(hysteresis: 0, enterDelay: 0, exitDelay: 0, passThrough: true)
        var harness = try MonitorHarness(
            regions: [grid.circle("c", radius: 20), grid.square("sq", x: 200, half: 10)], settings: settings)
        // 25 m/s: 0 → 100 m passes the circle centre between fixes; 150 → 250 passes the square.
        try harness.feed(grid.walk(xs: [-50, 50, 150, 250], dt: 4))
        #expect(harness.summary == ["enter@1.2[pass]", "exit@2.8[pass]", "enter@9.6[pass]", "exit@10.4[pass]"])
        var raw = try MonitorHarness(regions: [grid.circle("c", radius: 20)], settings: MonitorHarness.raw)
        try raw.feed(grid.walk(xs: [-50, 50, 150, 250], dt: 4))
        #expect(raw.events.isEmpty)
    }

    @Test func dwellFiresOnceAtEnterPlusDwell() throws {
        let dwelling = RegionSettings(dwell: 30)
        var harness = try MonitorHarness(
            regions: [
                grid.circle("long", radius: 50, settings: dwelling),
                grid.circle("short", x: 1000, radius: 50, settings: dwelling),
            ],
            settings: MonitorHarness.raw)
        var fixes = (0..<60).map { grid.fix(0, 0, t: Double($0)) }  // 60 s in "long"
        fixes += (0..<10).map { grid.fix(1000, 0, t: 100 + Double($0)) }  // 10 s in "short"
        fixes.append(grid.fix(2000, 0, t: 200))
        try harness.feed(fixes)
        let long = harness.events.filter { $0.regionID == "long" }
        #expect(long.map(\.kind) == [.enter, .dwell, .exit])
        #expect(long[1].time == long[0].time + 30)
        #expect(harness.events.filter { $0.regionID == "short" }.map(\.kind) == [.enter, .exit])
    }

    /// A dwell and an overstay both due at one fix come in time order: an overstay set shorter
    /// than the dwell first, and the dwell first when both fall at the same time.
    @Test(arguments: [
        (60.0, 30.0, ["enter@0.0", "overstay@30.0", "dwell@60.0", "exit@100.1"]),
        (30.0, 30.0, ["enter@0.0", "dwell@30.0", "overstay@30.0", "exit@100.1"]),
        (30.0, 45.0, ["enter@0.0", "dwell@30.0", "overstay@45.0", "exit@100.1"]),
    ])
    func timedEventsDueTogetherComeInTimeOrder(dwell: Double, maxDwell: Double, expected: [String]) throws {
        let region = grid.circle("depot", radius: 50, settings: RegionSettings(dwell: dwell, maxDwell: maxDwell))
        // Two fixes inside, 100 s apart (both events fall due at the second), then one outside.
        let fixes = [grid.fix(0, 0, t: 0), grid.fix(0, 0, t: 100), grid.fix(500, 0, t: 101)]
        var harness = try MonitorHarness(regions: [region], settings: MonitorHarness.raw)
        try harness.feed(fixes)
        #expect(harness.summary == expected)
    }

    @Test func overstayFiresOnceAtEnterPlusMaxDwellAfterTheDwellAndSurvivesASavedState() throws {
        // Inside from t = 0 (the first fix); dwell at 30 s, overstay at 45 s; out between t = 99
        // (at the centre) and t = 100 (450 m beyond the edge): at 99.1 s.
        let rules = RegionSettings(dwell: 30, maxDwell: 45)
        let region = grid.circle("depot", radius: 50, settings: rules)
        var fixes = (0..<100).map { grid.fix(0, 0, t: Double($0)) }
        fixes.append(grid.fix(500, 0, t: 100))
        var whole = try MonitorHarness(regions: [region], settings: MonitorHarness.raw)
        try whole.feed(fixes)
        #expect(whole.summary == ["enter@0.0", "dwell@30.0", "overstay@45.0", "exit@99.1"])
        // Cut after the overstay and resumed from the saved state: no second overstay.
        var first = try MonitorHarness(regions: [region], settings: MonitorHarness.raw)
        try first.feed(Array(fixes[..<50]))
        let saved = try JSONEncoder().encode(first.state)
        var second = try MonitorHarness(regions: [region], settings: MonitorHarness.raw)
        second.state = try JSONDecoder().decode(MonitorState.self, from: saved)
        try second.feed(Array(fixes[50...]))
        #expect(first.summary + second.summary == whole.summary)
        // A state saved before overstays existed (no key) reads as not emitted.
        var old = try JSONSerialization.jsonObject(with: saved) as! [String: Any]
        var memberships = old["memberships"] as! [String: [String: Any]]
        memberships["depot"]?["overstayEmitted"] = nil
        old["memberships"] = memberships
        let decoded = try JSONDecoder().decode(MonitorState.self, from: JSONSerialization.data(withJSONObject: old))
        #expect(decoded.memberships["depot"]?.overstayEmitted == false)
        // A visit shorter than max_dwell has none; a pass-through long enough has one, flagged.
        var short = try MonitorHarness(regions: [region], settings: MonitorHarness.raw)
        try short.feed((0..<40).map { grid.fix(0, 0, t: Double($0)) } + [grid.fix(500, 0, t: 40)])
        #expect(short.events.map(\.kind) == [.enter, .dwell, .exit])
        // 300 m around the centre, crossed at 5 m/s between two fixes outside: in at x = -300
        // (t = 40), out at x = 300 (t = 160).
        let wide = grid.circle("wide", radius: 300, settings: rules)
        var passing = try MonitorHarness(regions: [wide], settings: MonitorSettings(hysteresis: 0))
        try passing.feed([grid.fix(-500, 0, t: 0), grid.fix(500, 0, t: 200)])
        #expect(
            passing.summary == ["enter@40.0[pass]", "dwell@70.0[pass]", "overstay@85.0[pass]", "exit@160.0[pass]"])
    }

    @Test func stateCarriesAVisitAcrossRunsAndRoundTripsThroughJSON() throws {
        let region = grid.circle("c", radius: 50)
        let fixes = grid.walk(xs: stride(from: -100.0, through: 100, by: 7).map { $0 })
        var whole = try MonitorHarness(regions: [region], settings: MonitorSettings())
        try whole.feed(fixes)

        var first = try MonitorHarness(regions: [region], settings: MonitorSettings())
        try first.feed(Array(fixes[..<15]))
        #expect(first.state.memberships["c"]?.phase == .inside, "the first half ends inside: the visit stays open")
        let saved = try JSONEncoder().encode(first.state)
        var second = try MonitorHarness(regions: [region], settings: MonitorSettings())
        second.state = try JSONDecoder().decode(MonitorState.self, from: saved)
        try second.feed(Array(fixes[15...]))
        #expect(first.events + second.events == whole.events)
    }

    @Test func eachRegionIsTrackedIndependently() throws {
        var harness = try MonitorHarness(
            regions: [
                grid.circle("big", radius: 100), grid.circle("small", radius: 20), grid.square("sq", x: 60, half: 15),
            ],
            settings: MonitorHarness.raw)
        try harness.feed(grid.walk(xs: stride(from: -150.0, through: 150, by: 5).map { $0 }))
        let byRegion = Dictionary(grouping: harness.events, by: \.regionID).mapValues { $0.map(\.kind) }
        #expect(byRegion == ["big": [.enter, .exit], "small": [.enter, .exit], "sq": [.enter, .exit]])
    }
}

@Suite struct PassThroughDepthTests {
    let grid = LocalGrid()

    @Test func smallRegionsCrossedThroughTheMiddleArePassThroughs() throws {
        let settings = MonitorSettings(hysteresis: 0, enterDelay: 0, exitDelay: 0, passThrough: true)
        // No reported accuracy (taken as 15 m) and regions smaller than that: a chord through
        // the middle still counts.
        var harness = try MonitorHarness(
            regions: [grid.circle("c", radius: 10), grid.square("sq", x: 100, half: 10)], settings: settings)
        try harness.feed(grid.walk(xs: [-30, 30, 70, 130], dt: 2, accuracy: nil))
        #expect(harness.events.map(\.kind) == [.enter, .exit, .enter, .exit])
        #expect(harness.events.allSatisfy { $0.flags == .pass })
    }

    @Test func aClippedCornerIsNotAPassThroughUnlessAsked() throws {
        // A chord 3 m deep into a 50 m circle, fixes 10 m accurate.
        let chord = [grid.fix(-60, 47, t: 0, accuracy: 10), grid.fix(60, 47, t: 4, accuracy: 10)]
        var strict = try MonitorHarness(
            regions: [grid.circle("c", radius: 50)], settings: MonitorSettings(passThrough: true))
        try strict.feed(chord)
        #expect(strict.events.isEmpty)
        var any = try MonitorHarness(
            regions: [grid.circle("c", radius: 50)],
            settings: MonitorSettings(passThrough: true, passThroughDepthFactor: 0))
        try any.feed(chord)
        #expect(any.events.map(\.kind) == [.enter, .exit])
    }
}

/// The hysteresis band widened by the fixes' reported accuracy, against the events it must
/// give: a walk from the middle of a 50 m circle out to `excursion` metres beyond its boundary
/// (out at 9.5 s), 30 s there, back (in at 59.5 s), then away for good (out at 98.5 s).
@Suite struct AccuracyBandTests {
    let grid = LocalGrid()

    /// 5 m/s between the waypoints, a fix a second, each reporting `accuracy`.
    func excursion(_ excursion: Double, accuracy: Double) -> [Fix] {
        let far = 50 + excursion
        let out = (far - 2.5) / 5
        let waypoints: [(t: Double, x: Double)] = [
            (0, 2.5), (out, far), (out + 30, far), (2 * out + 30, 2.5), (2 * out + 50, 2.5), (2 * out + 130, 402.5),
            (2 * out + 160, 402.5),
        ]
        var fixes: [Fix] = []
        for (from, to) in zip(waypoints, waypoints.dropFirst()) {
            var t = (from.t).rounded(.up)
            while t < to.t {
                fixes.append(
                    grid.fix(from.x + (to.x - from.x) * (t - from.t) / (to.t - from.t), 0, t: t, accuracy: accuracy))
                t += 1
            }
        }
        return fixes
    }

    func summary(_ excursion: Double, accuracy: Double, region: RegionSettings = RegionSettings()) throws -> [String] {
        var harness = try MonitorHarness(
            regions: [grid.circle("c", radius: 50, settings: region)], settings: MonitorSettings())
        try harness.feed(self.excursion(excursion, accuracy: accuracy))
        return harness.summary
    }

    /// The events of one visit, or of two (the excursion's exit and re-entry between), with
    /// the crossing times of the walk: 5 m/s from 2.5 m, so out at 9.5 s, back in `excursion`/5 s
    /// after the 30 s out there, away at 59.5 s after the return.
    static func expected(_ excursion: Double, visits: Int) -> [String] {
        let out = (47.5 + excursion) / 5
        let backIn = out + 30 + excursion / 5
        let away = 2 * out + 59.5
        func at(_ t: Double) -> String { "\((t * 1000).rounded() / 1000)" }
        return visits == 1
            ? ["enter@0.0", "exit@\(at(away))"] : ["enter@0.0", "exit@9.5", "enter@\(at(backIn))", "exit@\(at(away))"]
    }

    static let twoVisits = expected(50, visits: 2), oneVisit = expected(50, visits: 1)

    /// 5 m fixes: the plain 20 m band. 20 m fixes: 60 m. 40 m and 50 m fixes: 120 m and
    /// 150 m, capped at 100 m.
    @Test(arguments: [(5.0, 50.0, 2), (20, 50, 1), (20, 65, 2), (40, 95, 1), (40, 105, 2), (50, 105, 2)])
    func theBandIsThreeTimesTheAccuracyUpToAHundredMetres(accuracy: Double, excursion: Double, visits: Int) throws {
        #expect(try summary(excursion, accuracy: accuracy) == Self.expected(excursion, visits: visits))
    }

    /// A region's own hysteresis is used as is, however poor the fixes.
    @Test func aRegionsHysteresisIsNotWidened() throws {
        #expect(try summary(50, accuracy: 20, region: RegionSettings(hysteresis: 20)) == Self.twoVisits)
        #expect(try summary(50, accuracy: 5, region: RegionSettings(hysteresis: 60)) == Self.oneVisit)
    }

    /// A region's delays override the run's: 50 s outside is not an exit under a 60 s exit
    /// delay (nor a 50 s one: the last fix out there is at 59 s), and is one under 45 s.
    @Test func aRegionsDelaysOverrideTheRuns() throws {
        #expect(try summary(50, accuracy: 5, region: RegionSettings(exitDelay: 60)) == Self.oneVisit)
        #expect(try summary(50, accuracy: 5, region: RegionSettings(exitDelay: 50)) == Self.oneVisit)
        #expect(try summary(50, accuracy: 5, region: RegionSettings(exitDelay: 45)) == Self.twoVisits)
        // The re-entry at 59.5 s is 2.5 m deep at 60 s and deeper after: a 0 s enter delay keeps
        // it; so does the default 5 s (confirmed by depth at 61 s).
        #expect(try summary(50, accuracy: 5, region: RegionSettings(enterDelay: 0)) == Self.twoVisits)
    }

    /// A membership is stored in a byte-saving order (a copy of it is a few moves, no call),
    /// but reads and writes as it always did: the same keys, the inside count as a number,
    /// and back to the same value.
    @Test func membershipKeepsItsSavedForm() throws {
        let membership = Membership(
            phase: .inside, enter: Crossing(time: 10, flags: .gap, position: Position(lon: 8.5, lat: 47.3)),
            outward: Crossing(time: 20, flags: []), armed: true, dwellEmitted: false, overstayEmitted: true,
            denseFrom: FixPoint(time: 9, lat: 47.3, lon: 8.49, accuracy: 12), insideFixes: 1)
        let text = String(decoding: try JSONEncoder().encode(membership), as: UTF8.self)
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        #expect(
            Set(object?.keys.map { $0 } ?? [])
                == [
                    "phase", "enter", "outward", "armed", "dwellEmitted", "overstayEmitted", "denseFrom", "insideFixes",
                ],
            "\(text)")
        #expect(object?["insideFixes"] as? Int == 1, "\(text)")
        #expect(object?["phase"] as? String == "inside", "\(text)")
        #expect(try JSONDecoder().decode(Membership.self, from: Data(text.utf8)) == membership)
        #expect(MemoryLayout<Membership?>.size <= 128)
    }
}
