import FencepostCore
import FencepostGeometry
import Foundation
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

    @Test func sortedAndUnsortedSetsPlanAlike() {
        let monitored = (0..<40).map { Self.circle("r\($0)") }.filter { $0.id != "r7" }.map(Self.digest)
        var desired = (3..<45).map { Self.circle("r\($0)", radius: $0 % 5 == 0 ? 20 : 10) }
        desired.sort { $0.id < $1.id }
        let walked = RegionPlan(desired: desired, monitored: monitored.sorted { $0.id < $1.id })
        let hashed = RegionPlan(desired: desired.reversed(), monitored: monitored.reversed())
        #expect(walked == hashed)
        #expect(walked.summary == "6 to add, 7 to update, 3 to remove, 29 unchanged")
    }

    @Test func identicalSetsPlanNothing() {
        let regions = (0..<50).map { Self.circle("r\($0)") }
        let plan = RegionPlan(desired: regions, monitored: regions.map(Self.digest))
        #expect(plan.isEmpty)
        #expect(plan.unchanged.count == 50)
    }
}

/// The canonical feature written straight from a region is the bytes of `feature` encoded
/// canonically, and the hashes are those of the trees they were once computed from.
@Suite struct CanonicalFeatureTests {
    static let config = #"""
        {"type":"FeatureCollection","features":[
        {"type":"Feature","geometry":{"type":"Point","coordinates":[13.4012345,52.5000001]},
         "properties":{"id":"c1","name":"Café \"Zum\"\n","radius":120.5,"zeta":[1,2.5,-0.0,1e-7],"Alpha":{"b":null,"a":true},
         "tags":["a","b"],"hysteresis":0,"dwell":60,"enter_delay":5,"exit_delay":10.25,"enabled":false,
         "devices":["truck-*"],"groups":["night"],"max_dwell":3600}},
        {"type":"Feature","id":7,"geometry":{"type":"Polygon","coordinates":[[[0,0],[10,0],[10,10],[0,10],[0,0]],
         [[2,2],[2,3],[3,3],[3,2],[2,2]]]},"properties":{"é":1,"_":"x"}},
        {"type":"Feature","geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],
         [[[5,5],[6,5],[6,6],[5,5]]]]},"properties":{"id":"m","expect":"inside","speed_limit_kmh":30,
         "speed_min_duration":5,"schedule":{"tz":"Europe/Dublin","weekly":[{"days":["mo"],"from":"07:00","to":"09:00"}],
         "except":["2026-12-25"]}}},
        {"type":"Feature","geometry":{"type":"LineString","coordinates":[[-8.6,52.66],[-8.5,52.7],[-8.4,52.71]]},
         "properties":{"id":"road","buffer":25}}
        ]}
        """#

    static func oldGeometry(_ region: Region) -> JSONValue {
        var geometry = region.shape.geometry.geoJSON
        if case .circle(_, let radius) = region.shape, case .object(var members) = geometry {
            members["radius"] = .number(radius)
            geometry = .object(members)
        }
        if case .corridor(let corridor) = region.shape, case .object(var members) = geometry {
            members["buffer"] = .number(corridor.buffer)
            geometry = .object(members)
        }
        return geometry
    }

    @Test func writtenStraightFromTheRegionIsTheFeaturesCanonicalText() throws {
        let file = RegionConfigParser().parse(Data(Self.config.utf8), file: "all.geojson")
        #expect(file.issues.isEmpty)
        var regions = file.regions.map(\.region)
        #expect(regions.count == 4)
        // Made in code, an extra property may carry a name the region states itself: its own wins.
        var odd = RegionPlanTests.circle("odd")
        odd.extraProperties = ["radius": .string("no"), "id": .number(3), "name": .null, "kept": .bool(true)]
        odd.name = "Odd"
        regions.append(odd)
        for region in regions {
            #expect(region.canonicalFeatureBytes() == Array(region.feature.canonicalData()), "\(region.id)")
            #expect(region.canonicalFeatureText == region.feature.canonicalText())
            #expect(region.canonicalGeometryBytes() == Array(Self.oldGeometry(region).canonicalData()))
        }
    }
}
