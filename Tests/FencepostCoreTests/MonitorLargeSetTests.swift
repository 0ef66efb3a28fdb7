import FencepostCore
import FencepostGeometry
import Foundation
import Testing

/// A large region set's areas are compiled across the cores (each chunk with a GEOS context of
/// its own); the monitor they make reports what monitors of smaller sets, compiled on one
/// thread with one context, report for the same regions.
@Suite struct MonitorLargeSetTests {
    /// 6,000 regions over 2 km by 1 km: circles, small squares (the edge-list areas) and stars
    /// of 160 vertices (GEOS's prepared areas), overlapping.
    static func regions() -> [Region] {
        let grid = LocalGrid()
        return (0..<6_000).map { index in
            let x = Double(index % 100) * 20
            let y = Double(index / 100) * 16
            switch index % 3 {
            case 0:
                return grid.circle("c\(index)", x: x, y: y, radius: 12 + Double(index % 7))
            case 1:
                return grid.square("s\(index)", x: x, y: y, half: 9)
            default:
                var ring = (0..<160).map { vertex -> Position in
                    let angle = Double(vertex) / 160 * 2 * .pi
                    let radius = vertex % 2 == 0 ? 14.0 : 7.0
                    return grid.at(x + radius * cos(angle), y + radius * sin(angle))
                }
                ring.append(ring[0])
                return Region(id: "p\(index)", shape: .area(.polygon(PolygonCoordinates(rings: [ring]))))
            }
        }
    }

    /// A walk back and forth across the whole set, one fix every 4 m.
    static func fixes() -> [Fix] {
        let grid = LocalGrid()
        var fixes: [Fix] = []
        for row in 0..<30 {
            let y = Double(row) * 32 + 5
            let xs = stride(from: -30.0, through: 2_010, by: 4).map { $0 }
            for x in row % 2 == 0 ? xs : xs.reversed() {
                fixes.append(grid.fix(x, y, t: Double(fixes.count)))
            }
        }
        return fixes
    }

    static func events(_ regions: [Region], _ fixes: [Fix]) throws -> [String: [String]] {
        var harness = try MonitorHarness(regions: regions, settings: MonitorHarness.raw)
        try harness.feed(fixes)
        return Dictionary(grouping: harness.events, by: \.regionID).mapValues { events in
            events.map { "\($0.kind.rawValue)@\($0.time)" }
        }
    }

    @Test func aLargeSetMonitorsAsItsHalvesDo() throws {
        let regions = Self.regions()
        let fixes = Self.fixes()
        let whole = try Self.events(regions, fixes)
        var halves = try Self.events(regions.enumerated().filter { $0.offset % 2 == 0 }.map(\.element), fixes)
        halves.merge(
            try Self.events(regions.enumerated().filter { $0.offset % 2 == 1 }.map(\.element), fixes),
            uniquingKeysWith: { first, _ in first })
        #expect(whole.count > 1_000)
        #expect(whole.keys.contains { $0.hasPrefix("p") })
        #expect(whole == halves)
    }
}
