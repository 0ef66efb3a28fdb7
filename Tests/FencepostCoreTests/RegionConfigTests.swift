import FencepostCore
import FencepostGeometry
import Foundation
import Testing

@Suite struct RegionConfigTests {
    let parser = RegionConfigParser()

    func collection(_ features: String...) -> Data {
        Data(#"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#.utf8)
    }

    static let square =
        #"{"type":"Polygon","coordinates":[[[8.50,47.37],[8.51,47.37],[8.51,47.38],[8.50,47.38],[8.50,47.37]]]}"#

    // MARK: - Large configs

    /// Read in batches across the cores, a large file gives what a small one does: every
    /// problem named, in feature order, with the feature's index and id.
    @Test func aLargeConfigNamesEveryProblemInOrder() throws {
        let bad: [Int: String] = [
            5: #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.5,47.3]},"properties":{"id":"c5"}}"#,
            9_000:
                #"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[2,2],[2,0],[0,2],[0,0]]]},"properties":{"id":"bowtie"}}"#,
            16_383:
                #"{"type":"Feature","geometry":{"type":"Point","coordinates":[200,47.3]},"properties":{"radius":5}}"#,
        ]
        let features = (0..<20_000).map { index in
            bad[index]
                ?? #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.5,47.3]},"properties":{"id":"c\#(index)","radius":\#(index % 400 + 1)}}"#
        }
        let file = parser.parse(
            Data(#"{"features":[\#(features.joined(separator: ","))],"type":"FeatureCollection"}"#.utf8),
            file: "big.geojson")
        #expect(file.regions.count == 19_997)
        #expect(file.regions.map(\.index) == (0..<20_000).filter { bad[$0] == nil })
        #expect(file.issues.map(\.featureIndex) == [5, 9_000, 16_383, 16_383])
        #expect(file.issues.map(\.featureID) == ["c5", "bowtie", nil, nil])
        #expect(file.issues[1].description.contains("Self-intersection"))
        #expect(throws: RegionConfigError.self) { try RegionConfig.merge([file]) }
        // A syntax error after the features refuses the file with that error alone.
        let broken = parser.parse(
            Data(#"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))],}"#.utf8),
            file: "broken.geojson")
        #expect(broken.regions.isEmpty)
        #expect(broken.issues.count == 1)
    }

    // MARK: - Valid configs

    @Test func readsCirclesPolygonsAndMultiPolygonsWithHoles() throws {
        let data = collection(
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.54,47.37]},"properties":{"id":"home","name":"Home","radius":50,"tags":["private"],"hysteresis":15,"dwell":300,"enter_delay":5,"exit_delay":30,"color":"red"}}"#,
            #"{"type":"Feature","id":"office","geometry":\#(Self.square),"properties":{"enabled":false}}"#,
            #"{"type":"Feature","geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[10,0],[10,10],[0,10],[0,0]],[[4,4],[4,6],[6,6],[6,4],[4,4]]],[[[20,20],[21,20],[21,21],[20,20]]]]},"properties":{"id":7}}"#
        )
        let regions = try RegionConfig.merge([parser.parse(data, file: "a.geojson")])
        #expect(regions.map(\.id) == ["7", "home", "office"])
        let home = regions[1]
        #expect(home.shape == .circle(center: Position(lon: 8.54, lat: 47.37), radius: 50))
        #expect(home.name == "Home")
        #expect(home.tags == ["private"])
        #expect(
            home.settings == RegionSettings(hysteresis: 15, dwell: 300, enterDelay: 5, exitDelay: 30, enabled: true))
        #expect(home.extraProperties == ["color": .string("red")])
        #expect(regions[2].settings.enabled == false)
        #expect(regions[2].shape.kind == "polygon")
        guard case .area(.multiPolygon(let parts)) = regions[0].shape else {
            Issue.record("expected a multipolygon")
            return
        }
        #expect(parts.count == 2 && parts[0].rings.count == 2)
    }

    @Test func canonicalFeatureParsesBackToTheSameRegion() throws {
        let data = collection(
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.54,47.37]},"properties":{"id":"home","radius":50,"tags":["a"],"dwell":60,"nested":{"x":[1,2]}}}"#,
            #"{"type":"Feature","geometry":\#(Self.square),"properties":{"id":"sq","enabled":false}}"#)
        for region in try RegionConfig.merge([parser.parse(data, file: "a.geojson")]) {
            let again = try parser.region(fromFeature: region.feature.canonicalData(), source: "canonical")
            #expect(again == region)
            #expect(again.contentHash == region.contentHash)
        }
    }

    @Test func contentHashIgnoresKeyOrderDefaultsAndWhereTheIDIs() throws {
        let a = collection(
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"id":"x","radius":5}}"#)
        let b = collection(
            #"{"properties":{"radius":5.0,"enabled":true,"tags":[]},"id":"x","geometry":{"coordinates":[1,2],"type":"Point"},"type":"Feature"}"#
        )
        let regionA = try #require(parser.parse(a, file: "a").regions.first?.region)
        let regionB = try #require(parser.parse(b, file: "b").regions.first?.region)
        #expect(regionA.contentHash == regionB.contentHash)
        var moved = regionA
        moved.shape = .circle(center: Position(lon: 1, lat: 2), radius: 6)
        #expect(moved.contentHash != regionA.contentHash)
        #expect(moved.geometryHash != regionA.geometryHash)
        var renamed = regionA
        renamed.name = "renamed"
        #expect(renamed.contentHash != regionA.contentHash)
        #expect(renamed.geometryHash == regionA.geometryHash)
    }

    // MARK: - Invalid configs

    @Test(arguments: [
        (#"{"type":"FeatureCollection","features":[}"#, "invalid_json", "line 1, column 41"),
        (#"{"type":"Feature","geometry":null}"#, "not_feature_collection", "found a Feature"),
        (#"[1,2]"#, "not_feature_collection", "found a JSON array"),
        (
            #"{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::2056"}},"features":[]}"#,
            "projected_crs", "looks projected"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"radius":5}}]}"#,
            "missing_id", "feature 0: missing id"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"id":"a b","radius":5}}]}"#,
            "invalid_id", "invalid id \"a b\""
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"id":"p"}}]}"#,
            "missing_radius", "needs properties.radius"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"id":"p","radius":0}}]}"#,
            "non_positive_radius", "greater than 0"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"id":"p","radius":-3}}]}"#,
            "non_positive_radius", "got -3"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[2600000,1200000]},"properties":{"id":"p","radius":5}}]}"#,
            "coordinate_out_of_range", "looks projected, convert to WGS84 lon/lat"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[47.4,120.5]},"properties":{"id":"p","radius":5}}]}"#,
            "coordinate_out_of_range", "looks like [lat, lon]"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]},"properties":{"id":"q"}}]}"#,
            "unclosed_ring", "ring 0 is not closed"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]},"properties":{"id":"q"}}]}"#,
            "too_few_positions", "ring 0 has 3 positions"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[2,2],[2,0],[0,2],[0,0]]]},"properties":{"id":"bowtie"}}]}"#,
            "invalid_geometry", "Self-intersection at [1.0, 1.0]"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[10,0],[10,10],[0,10],[0,0]],[[20,20],[21,20],[21,21],[20,20]]]},"properties":{"id":"hole-outside"}}]}"#,
            "invalid_geometry", "Hole lies outside shell"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"MultiLineString","coordinates":[[[0,0],[1,1]]]},"properties":{"id":"l"}}]}"#,
            "unsupported_geometry", "unsupported geometry type MultiLineString"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]},"properties":{"id":"l"}}]}"#,
            "invalid_property", "a LineString is a corridor: it needs buffer"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[0,0]]},"properties":{"id":"l","buffer":5}}]}"#,
            "malformed_coordinates", "all the same point"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]},"properties":{"id":"l","buffer":20000}}]}"#,
            "invalid_property", "must be at most 10000 m"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"id":"p","radius":5,"hysteresis":"big"}}]}"#,
            "invalid_property", "property hysteresis: must be a number"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"id":"p","radius":5,"enabled":"no"}}]}"#,
            "invalid_property", "property enabled"
        ),
    ])
    func refusesWithFileFeatureAndReason(json: String, code: String, message: String) {
        let file = parser.parse(Data(json.utf8), file: "regions/bad.geojson")
        #expect(file.regions.isEmpty)
        let issue = file.issues.first
        #expect(file.issues.count == 1)
        #expect(issue?.problem.code == code)
        #expect(issue?.description.hasPrefix("regions/bad.geojson: ") == true)
        #expect(issue?.description.contains(message) == true, "\(issue?.description ?? "no issue")")
    }

    @Test func namesTheFeatureIndexAndIDOfEachProblem() {
        let data = collection(
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"id":"ok","radius":5}}"#,
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"id":"bad","radius":-1}}"#
        )
        let file = parser.parse(data, file: "r.geojson")
        #expect(
            file.issues.map(\.description) == [
                #"r.geojson: feature 1 (id "bad"): radius must be greater than 0 metres, got -1.0"#
            ])
        #expect(throws: RegionConfigError.self) { try RegionConfig.merge([file]) }
    }

    @Test func duplicateIDsNameBothFiles() throws {
        let a = parser.parse(
            collection(
                #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"id":"dup","radius":5}}"#
            ), file: "a.geojson")
        let b = parser.parse(
            collection(
                #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"id":"other","radius":5}}"#,
                #"{"type":"Feature","geometry":{"type":"Point","coordinates":[3,4]},"properties":{"id":"dup","radius":9}}"#
            ), file: "b.geojson")
        #expect {
            try RegionConfig.merge([a, b])
        } throws: { error in
            (error as? RegionConfigError)?.description
                == #"b.geojson: feature 1 (id "dup"): duplicate id "dup": also used by a.geojson feature 0"#
        }
    }

    @Test func reportsEveryProblemInOneRun() {
        let data = collection(
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{}}"#,
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"id":"x"}}"#,
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[500,2]},"properties":{"id":"y","radius":1}}"#)
        #expect(
            parser.parse(data, file: "f").issues.map(\.problem.code) == [
                "missing_id", "missing_radius", "missing_radius", "coordinate_out_of_range",
            ])
    }
}
