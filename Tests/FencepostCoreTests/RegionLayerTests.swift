import FencepostCore
import FencepostGeometry
import Foundation
import Testing

/// Regions of one `layer` partition space: a device is in at most one of them at a time, and
/// moving to a neighbour closes one visit and opens the other at the same crossing.
@Suite struct RegionLayerTests {
    let grid = LocalGrid()

    /// Two communes 1 km square sharing the border x = 0 (west from -1000 to 0, east from 0 to
    /// 1000, y from -500 to 500), in one layer or standing alone.
    func communes(layer: String?) -> [Region] {
        var settings = RegionSettings()
        settings.layer = layer
        return [
            grid.square("west", x: -500, half: 500, settings: settings),
            grid.square("east", x: 500, half: 500, settings: settings),
        ]
    }

    /// A walk from deep in the west commune to the border, then 40 minutes along it, a fix
    /// every 15 s at 12 m accuracy (so a band of 36 m), from 5 to 30 m either side of the line
    /// as a path along a border road does with GPS noise; then deep into the east commune.
    static func borderWalk(_ grid: LocalGrid) -> [Fix] {
        var fixes = (0..<20).map { grid.fix(-400 + 20 * Double($0), -300, t: Double($0) * 15, accuracy: 12) }
        let sides: [Double] = [-5, 12, -20, 8, 25, -10, 30, -15, 5, 18, -25, 10, -8, 22, -30, 14]
        for step in 0..<160 {
            let x = sides[step % sides.count]
            fixes.append(grid.fix(x, -300 + 3 * Double(step), t: 300 + Double(step) * 15, accuracy: 12))
        }
        fixes += (1...20).map { grid.fix(20 * Double($0), 180, t: 2_700 + Double($0) * 15, accuracy: 12) }
        return fixes
    }

    @Test func aWalkAlongTheBorderIsInOneCommuneAtATime() throws {
        let fixes = Self.borderWalk(grid)
        var alone = try MonitorHarness(regions: communes(layer: nil), settings: MonitorSettings())
        var layered = try MonitorHarness(regions: communes(layer: "communes"), settings: MonitorSettings())
        try alone.feed(fixes)
        try layered.feed(fixes)

        // Standing alone, each keeps its band: the east commune opens during the border walk
        // while the west one is still open.
        let aloneEast = try #require(alone.events.first { $0.regionID == "east" && $0.kind == .enter })
        let aloneWestExit = try #require(alone.events.first { $0.regionID == "west" && $0.kind == .exit })
        #expect(aloneEast.time < aloneWestExit.time - 600)

        // In a layer: west from the start, east from where the walk left west for good, at the
        // same instant; never both at once.
        let summary = layered.events.map { "\($0.kind.rawValue) \($0.regionID)" }
        #expect(summary == ["enter west", "exit west", "enter east"])
        let west = layered.events.filter { $0.regionID == "west" }
        let east = layered.events.filter { $0.regionID == "east" }
        #expect(west.last?.time == east.first?.time)
        // Left for good after the border walk (t = 2,700 s), not at its first step across.
        #expect((east.first?.time ?? 0) > 2_600)
    }

    /// The state saved in the middle of the border walk (the east commune waiting for the west
    /// one to let go) gives the same events once resumed.
    @Test func aLayerResumesFromTheSavedState() throws {
        let fixes = Self.borderWalk(grid)
        var whole = try MonitorHarness(regions: communes(layer: "communes"), settings: MonitorSettings())
        try whole.feed(fixes)
        var first = try MonitorHarness(regions: communes(layer: "communes"), settings: MonitorSettings())
        try first.feed(Array(fixes[..<100]))
        let saved = try JSONEncoder().encode(first.state)
        var second = try MonitorHarness(regions: communes(layer: "communes"), settings: MonitorSettings())
        second.state = try JSONDecoder().decode(MonitorState.self, from: saved)
        try second.feed(Array(fixes[100...]))
        #expect((first.events + second.events).map(\.time) == whole.events.map(\.time))
        #expect((first.events + second.events).map(\.regionID) == whole.events.map(\.regionID))
    }

    /// A region outside the layer (a park overlapping both communes) is followed as before.
    @Test func aRegionOutsideTheLayerIsUnaffected() throws {
        let park = grid.circle("park", x: 0, y: 0, radius: 200)
        let fixes = Self.borderWalk(grid)
        var alone = try MonitorHarness(regions: [park], settings: MonitorSettings())
        var layered = try MonitorHarness(regions: communes(layer: "communes") + [park], settings: MonitorSettings())
        try alone.feed(fixes)
        try layered.feed(fixes)
        #expect(layered.events.filter { $0.regionID == "park" } == alone.events)
    }
}
