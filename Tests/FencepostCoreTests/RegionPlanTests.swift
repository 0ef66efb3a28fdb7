import FencepostCore
import FencepostGeometry
import Testing

@Suite struct RegionPlanTests {
    static func circle(_ id: String, radius: Double = 10, name: String? = nil) -> Region {
        Region(id: id, name: name, shape: .circle(center: Position(lon: 1, lat: 1), radius: radius))
    }

    static func digest(_ region: Region) -> MonitoredRegionDigest {
        MonitoredRegionDigest(id: region.id, contentHash: region.contentHash, geometryHash: region.geometryHash)
    }

    @Test func diffsByIDAndContentHash() {
        let monitored = [Self.circle("keep"), Self.circle("move"), Self.circle("rename"), Self.circle("gone")].map(
            Self.digest)
        let desired = [
            Self.circle("keep"), Self.circle("move", radius: 20), Self.circle("rename", name: "New"),
            Self.circle("new"),
        ]
        let plan = RegionPlan(desired: desired, monitored: monitored)
        #expect(plan.changes.map(\.line) == ["- remove gone", "~ update move", "+ add new", "~ update rename"])
        #expect(plan.unchanged == ["keep"])
        #expect(plan.summary == "1 to add, 2 to update, 1 to remove, 1 unchanged")
        #expect(plan.retirements.map(\.regionID) == ["gone", "move"])
        #expect(plan.retirements.map(\.reason) == [.regionRemoved, .regionChanged])
    }

    @Test func anUpdateSaysWhatChangedOnceTheStoredFeaturesAreKnown() {
        let before = [Self.circle("move"), Self.circle("rename"), Self.circle("narrow")]
        var narrowed = Self.circle("narrow")
        narrowed.audience = RegionAudience(groups: ["night-shift"])
        var moved = Self.circle("move")
        moved.shape = .circle(center: Position(lon: 2, lat: 1), radius: 30)
        var plan = RegionPlan(
            desired: [moved, Self.circle("rename", name: "New"), narrowed], monitored: before.map(Self.digest))
        #expect(plan.lines == ["~ update move", "~ update narrow", "~ update rename"])
        plan.noteChangedFields(stored: Dictionary(uniqueKeysWithValues: before.map { ($0.id, $0.feature) }))
        #expect(
            plan.lines == [
                "~ update move: geometry, radius", "~ update narrow: groups", "~ update rename: name",
            ])
    }

    @Test func identicalSetsPlanNothing() {
        let regions = (0..<50).map { Self.circle("r\($0)") }
        let plan = RegionPlan(desired: regions, monitored: regions.map(Self.digest))
        #expect(plan.isEmpty)
        #expect(plan.unchanged.count == 50)
    }
}
