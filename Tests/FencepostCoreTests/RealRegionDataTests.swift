import FencepostCore
import FencepostTestSupport
import Foundation
import Testing

/// The third-party region data in ../shared/data: real polygons and POIs as users bring them.
@Suite(.enabled(if: TestData.sharedAvailable, "needs ../shared/data beside the checkout"))
struct RealRegionDataTests {
    let parser = RegionConfigParser()

    func imported(_ path: String, _ options: RegionImportOptions) throws -> [Region] {
        let document = try JSONParser.parse(try TestData.sharedData(path))
        let config = RegionImport.convert(document, options: options).canonicalData()
        return try RegionConfig.merge([parser.parse(config, file: path)])
    }

    @Test func zurichDistrictsArePolygons() throws {
        let regions = try imported(
            "zurich/stadtkreise.geojson",
            RegionImportOptions(idProperty: "Kreisnummer", idPrefix: "zh-kreis-", nameProperty: "Kreisname"))
        #expect(regions.count == 12)
        #expect(regions.allSatisfy { $0.shape.kind == "polygon" })
        #expect(regions.first { $0.id == "zh-kreis-7" }?.name == "Kreis 7")
    }

    @Test func torontoNeighbourhoodsAreMultiPolygons() throws {
        let regions = try imported(
            "toronto/toronto_neighbourhoods.geojson",
            RegionImportOptions(idProperty: "AREA_SHORT_CODE", idPrefix: "toronto:", nameProperty: "AREA_NAME"))
        #expect(regions.count == 158)
        #expect(regions.allSatisfy { $0.shape.kind == "multipolygon" })
        #expect(Set(regions.map(\.id)).count == 158)
    }

    @Test func londonCycleHireDocksAreCircles() throws {
        let regions = try imported("london/cycle_hire.geojson", RegionImportOptions(idPrefix: "tfl-dock:", radius: 40))
        #expect(regions.count == 742)
        #expect(regions.allSatisfy { if case .circle(_, 40) = $0.shape { true } else { false } })
        #expect(regions.contains { $0.id == "tfl-dock:1" && $0.name == "River Street" })
        #expect(regions.first { $0.id == "tfl-dock:1" }?.extraProperties["area"] == .string("Clerkenwell"))
    }

    @Test func cycleHireDocksWithoutARadiusAreRefused() throws {
        let file = parser.parse(try TestData.sharedData("london/cycle_hire.geojson"), file: "cycle_hire.geojson")
        #expect(file.regions.isEmpty)
        #expect(file.issues.count == 742)
        #expect(Set(file.issues.map(\.problem.code)) == ["missing_radius"])
    }

    @Test func projectedTsinghuaCampusIsRefused() throws {
        let file = parser.parse(try TestData.sharedData("beijing/tsinghua.geojson"), file: "tsinghua.geojson")
        #expect(file.regions.isEmpty)
        #expect(file.issues.map(\.problem.code) == ["projected_crs"])
        #expect(file.issues.first?.description.contains("looks projected, convert to WGS84 lon/lat") == true)
    }

    @Test func projectedCoordinatesWithoutACRSMemberAreRefused() throws {
        // The same campus with its crs member stripped: the coordinates themselves give it away.
        guard case .object(var document) = try JSONParser.parse(try TestData.sharedData("beijing/tsinghua.geojson"))
        else {
            Issue.record("tsinghua.geojson is not an object")
            return
        }
        document["crs"] = nil
        let stripped = RegionImport.convert(.object(document), options: RegionImportOptions(idPrefix: "tsinghua"))
            .canonicalData()
        let file = parser.parse(stripped, file: "tsinghua.geojson")
        #expect(file.issues.map(\.problem.code) == ["coordinate_out_of_range"])
        #expect(file.issues.first?.description.contains("looks projected, convert to WGS84 lon/lat") == true)
    }
}
