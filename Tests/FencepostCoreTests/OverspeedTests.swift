import FencepostCore
import FencepostGeometry
import Foundation
import Testing

/// `speed_limit_kmh`: one `overspeed` per episode above the limit inside the region, at its
/// start, with its top speed and duration.
struct OverspeedTests {
    let grid = LocalGrid()

    /// 500 m around the origin, 50 km/h (13.9 m/s), episodes of 10 s or more.
    func zone(minDuration: Double? = nil) -> Region {
        grid.circle("zone", radius: 500, settings: RegionSettings(speedLimit: 50, speedMinDuration: minDuration))
    }

    /// Fixes a second apart along x at the given speeds (m/s), each for its seconds, from x = -600.
    func drive(_ legs: [(speed: Double, seconds: Int)], reported: Bool = false) -> [Fix] {
        var x = -600.0
        var t = 0.0
        var fixes = [grid.fix(x, 0, t: t)]
        for leg in legs {
            for _ in 0..<leg.seconds {
                x += leg.speed
                t += 1
                var fix = grid.fix(x, 0, t: t)
                if reported { fix.speed = leg.speed }
                fixes.append(fix)
            }
        }
        return fixes
    }

    func overspeeds(_ harness: MonitorHarness) -> [String] {
        harness.events.filter { $0.kind == .overspeed }.map {
            "overspeed@\($0.time) \(String(describing: $0.overspeed?.properties.canonicalText() ?? ""))"
        }
    }

    @Test func anEpisodeLongEnoughIsOneEventAtItsStartWithItsTopSpeedAndDuration() throws {
        // 10 m/s to x = -200 (in at x = -500, t = 10), 20 m/s (72 km/h) for 15 s to x = 100,
        // then 10 m/s out (x = 500 at t = 95). The first fast fix is at t = 41, the first slow
        // one again at t = 56: 15 s.
        var harness = try MonitorHarness(regions: [zone()], settings: MonitorHarness.raw)
        try harness.feed(drive([(10, 40), (20, 15), (10, 50)]))
        #expect(
            harness.summary == ["enter@10.0", "overspeed@41.0", "exit@95.0"])
        #expect(overspeeds(harness) == [#"overspeed@41.0 {"duration":15,"max_speed_kmh":72}"#])
        // Reported speeds say the same.
        var reported = try MonitorHarness(regions: [zone()], settings: MonitorHarness.raw)
        try reported.feed(drive([(10, 40), (20, 15), (10, 50)], reported: true))
        #expect(overspeeds(reported) == overspeeds(harness))
    }

    @Test func aShortBurstIsNoneUnlessTheMinimumSaysSo() throws {
        let burst = drive([(10, 40), (20, 5), (10, 50)])
        var harness = try MonitorHarness(regions: [zone()], settings: MonitorHarness.raw)
        try harness.feed(burst)
        #expect(overspeeds(harness).isEmpty, "5 s is under the default 10 s")
        var strict = try MonitorHarness(regions: [zone(minDuration: 3)], settings: MonitorHarness.raw)
        try strict.feed(burst)
        #expect(overspeeds(strict) == [#"overspeed@41.0 {"duration":5,"max_speed_kmh":72}"#])
    }

    @Test func anEpisodeUnderWayAtTheExitEndsThereAndSurvivesASavedState() throws {
        // 10 m/s to x = 0 (t = 60), then 25 m/s (90 km/h) out: the edge x = 500 at t = 80.
        let fixes = drive([(10, 60), (25, 30)])
        var whole = try MonitorHarness(regions: [zone()], settings: MonitorHarness.raw)
        try whole.feed(fixes)
        #expect(whole.summary == ["enter@10.0", "exit@80.0", "overspeed@61.0"])
        #expect(overspeeds(whole) == [#"overspeed@61.0 {"duration":19,"max_speed_kmh":90}"#])
        // Cut in the middle of the episode and resumed from the saved state.
        var first = try MonitorHarness(regions: [zone()], settings: MonitorHarness.raw)
        try first.feed(Array(fixes[...70]))
        let saved = try JSONEncoder().encode(first.state)
        var second = try MonitorHarness(regions: [zone()], settings: MonitorHarness.raw)
        second.state = try JSONDecoder().decode(MonitorState.self, from: saved)
        try second.feed(Array(fixes[71...]))
        #expect(first.summary + second.summary == whole.summary)
        #expect(overspeeds(second) == overspeeds(whole))
    }
}
