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

    /// The Google Location History day in Zurich (416 fixes, 20–40 m accuracy) against the 12
    /// city districts, which share their borders. Raw containment changes district about a
    /// hundred times (jitter at the borders). Standing alone, each district keeps its own band,
    /// so at times two are open at once; in one `layer`, one district at a time, each ending
    /// where the next begins.
    @Test func zurichDistrictsInALayerAreOneAtATime() throws {
        let text = String(decoding: try TestData.sharedData("zurich/google_trajectory.csv"), as: UTF8.self)
        let fixes = text.split(separator: "\n").dropFirst().compactMap { line -> Fix? in
            let fields = line.split(separator: ";").map(String.init)
            guard fields.count >= 6, let time = Timestamp.parse(fields[1]), let lat = Double(fields[2]),
                let lon = Double(fields[3])
            else { return nil }
            return Fix(device: "g", time: time, lat: lat, lon: lon, accuracy: Double(fields[5]))
        }.sorted { $0.time < $1.time }
        #expect(fixes.count == 416)
        let districts = try imported(
            "zurich/stadtkreise.geojson", RegionImportOptions(idProperty: "Kreisnummer", idPrefix: "zh-kreis-"))
        func events(layer: String?, settings: MonitorSettings = MonitorSettings()) throws -> [MonitorEvent] {
            let regions = districts.map { region in
                var region = region
                region.settings.layer = layer
                return region
            }
            let monitor = try Monitor(regions: regions, settings: settings)
            var track = monitor.track(resuming: MonitorState(), device: "g")
            var events: [MonitorEvent] = []
            for fix in fixes { try monitor.process(fix, track: &track) { events.append($0) } }
            return events
        }
        /// The most districts open at once, exits at an instant counted before its enters.
        func mostOpen(_ events: [MonitorEvent]) -> Int {
            var open = 0
            var most = 0
            for event in events.sorted(by: {
                ($0.time, $0.kind == .enter ? 1 : 0) < ($1.time, $1.kind == .enter ? 1 : 0)
            }) {
                open += event.kind == .enter ? 1 : (event.kind == .exit ? -1 : 0)
                most = max(most, open)
            }
            return most
        }
        let raw = try events(
            layer: nil, settings: MonitorSettings(hysteresis: 0, enterDelay: 0, exitDelay: 0, passThrough: false))
        let alone = try events(layer: nil)
        let layered = try events(layer: "kreise")
        #expect(raw.filter { $0.kind == .enter }.count > 90)
        #expect(mostOpen(alone) >= 2)
        #expect(mostOpen(layered) == 1)
        let enters = layered.filter { $0.kind == .enter }
        let exits = layered.filter { $0.kind == .exit }
        #expect(enters.count <= alone.filter { $0.kind == .enter }.count && enters.count >= 4)
        // Every exit is met by the next district's enter at the same instant.
        for exit in exits { #expect(enters.contains { $0.time == exit.time }, "exit at \(exit.time)") }
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
