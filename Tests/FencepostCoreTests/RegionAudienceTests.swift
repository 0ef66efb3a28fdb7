import FencepostCore
import FencepostGeometry
import Foundation
import Testing

@Suite struct RegionAudienceTests {
    @Test(arguments: [
        ("car-7", "car-*", true), ("car-", "car-*", true), ("car", "car-*", false), ("truck-1", "truck-?", true),
        ("truck-12", "truck-?", false), ("anything", "*", true), ("a-b-c", "a*c", true), ("a-b-d", "a*c", false),
        ("ab", "a*b*", true), ("phone", "phone", true), ("phone2", "phone", false), ("x-car-1", "car-*", false),
    ])
    func patterns(device: String, selector: String, matches: Bool) {
        #expect(RegionAudience.matches(device, selector) == matches)
    }

    @Test func aRegionAppliesToItsGroupsMembersTheDevicesItNamesOrEveryone() {
        let roster = DeviceRoster([.init(device: "a", groups: ["blue", "red"]), .init(device: "b", groups: ["red"])])
        let circle = RegionShape.circle(center: Position(lon: 8, lat: 47), radius: 50)
        let blue = Region(id: "blue", shape: circle, audience: RegionAudience(groups: ["blue"]))
        let named = Region(id: "named", shape: circle, audience: RegionAudience(devices: ["b", "car-*"]))
        let all = Region(id: "all", shape: circle)
        #expect([blue, named, all].filter { roster.applies($0, to: "a") }.map(\.id) == ["blue", "all"])
        #expect([blue, named, all].filter { roster.applies($0, to: "b") }.map(\.id) == ["named", "all"])
        #expect([blue, named, all].filter { roster.applies($0, to: "car-9") }.map(\.id) == ["named", "all"])
        #expect([blue, named, all].filter { roster.applies($0, to: "stranger") }.map(\.id) == ["all"])
    }

    @Test func selectorsAreReadWrittenAndChecked() throws {
        let parser = RegionConfigParser()
        let feature = #"""
            {"type":"Feature","geometry":{"type":"Point","coordinates":[8,47]},
             "properties":{"id":"depot","radius":80,"devices":["truck-*"],"groups":["night-shift"]}}
            """#
        let region = try parser.region(fromFeature: Data(feature.utf8), source: "test")
        #expect(region.audience == RegionAudience(devices: ["truck-*"], groups: ["night-shift"]))
        #expect(region.extraProperties.isEmpty)
        // The canonical feature carries them: a stored region reads back the same.
        #expect(try parser.region(fromFeature: region.feature.canonicalData(), source: "stored") == region)
        // A region for everyone says nothing of it.
        var everyone = region
        everyone.audience = .everyone
        #expect(everyone.feature["properties"]?["devices"] == nil && everyone.contentHash != region.contentHash)

        for bad in [#""devices":"truck-1""#, #""groups":[""]"#, #""groups":[3]"#] {
            let text =
                #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8,47]},"properties":{"id":"x","radius":5,"#
                + bad + "}}"
            #expect(throws: RegionConfigError.self) { try parser.region(fromFeature: Data(text.utf8), source: "test") }
        }
    }
}
