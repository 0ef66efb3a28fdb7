import FencepostCore
import FencepostGeometry
import Foundation
import Testing

/// A region's compact stored form reads back as the region its canonical feature reads back
/// as, whatever its shape and properties; bytes that are not one are refused.
@Suite struct RegionCompactFormTests {
    static let features = [
        #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.5417,47.3769]},"properties":{"id":"circle","radius":150}}"#,
        #"{"type":"Feature","geometry":{"type":"Point","coordinates":[-0.0,51.4779]},"properties":{"id":"zero","radius":0.5,"name":"Greenwich \"meridian\"","tags":["a","b"]}}"#,
        #"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[8.5,47.37],[8.52,47.37],[8.52,47.39],[8.5,47.39],[8.5,47.37]],[[8.505,47.375],[8.506,47.375],[8.506,47.376],[8.505,47.375]]]},"properties":{"id":"holed","hysteresis":0,"dwell":600,"max_dwell":3600,"enter_delay":5,"exit_delay":30,"layer":"districts","privacy":true,"devices":["truck-*"],"groups":["night"],"colour":{"fill":"red","alpha":0.25},"note":null}}"#,
        #"{"type":"Feature","geometry":{"type":"MultiPolygon","coordinates":[[[[1.1,2.2],[1.3,2.2],[1.3,2.4],[1.1,2.2]]],[[[3.1,4.1],[3.3,4.1],[3.3,4.3],[3.1,4.1]]]]},"properties":{"id":"islands","enabled":false,"speed_limit_kmh":30,"speed_min_duration":0,"expect":"inside","schedule":{"tz":"Europe/Dublin","weekly":[{"days":["mo","tu"],"from":"07:00","to":"09:00"},{"days":["sa"],"from":"22:00","to":"02:30"}],"except":["2026-12-25"]}}}"#,
        #"{"type":"Feature","geometry":{"type":"LineString","coordinates":[[8.5,47.37],[8.51,47.372],[8.52,47.371]]},"properties":{"id":"route","buffer":40,"name":"Route 4"}}"#,
    ]

    static func region(_ feature: String) throws -> Region {
        try RegionConfigParser().region(fromFeature: Data(feature.utf8), source: "test")
    }

    @Test(arguments: features) func readsBackAsTheCanonicalFeatureDoes(_ feature: String) throws {
        let parser = RegionConfigParser()
        let region = try Self.region(feature)
        let fromFeature = try parser.region(
            fromFeature: Data(region.canonicalFeatureText.utf8), source: "stored", validatingGeometry: false)
        let fromCompact = try parser.region(fromCompact: RegionCompactForm.encode(region), source: "stored")
        #expect(fromCompact == fromFeature)
        #expect(fromCompact == region)
        // Bit for bit, not only equal as numbers: a -0 coordinate comes back as the feature's 0.
        #expect(
            fromCompact.shape.geometry.positions.map(\.lon.bitPattern)
                == fromFeature.shape.geometry.positions.map(\.lon.bitPattern))
        #expect(fromCompact.canonicalFeatureText == region.canonicalFeatureText)
        #expect(fromCompact.contentHash == region.contentHash)
    }

    @Test func refusesBytesThatAreNotOne() throws {
        let compact = RegionCompactForm.encode(try Self.region(Self.features[2]))
        let parser = RegionConfigParser()
        for broken in [[], [UInt8](compact.prefix(40)), [9] + compact.dropFirst(), [1, 7] + compact.dropFirst(2)] {
            #expect(throws: RegionConfigError.self) { try parser.region(fromCompact: broken, source: "stored") }
        }
        var badProperties = compact
        badProperties.removeLast()
        #expect(throws: RegionConfigError.self) { try parser.region(fromCompact: badProperties, source: "stored") }
    }
}

extension Shape {
    /// Every position, in order.
    fileprivate var positions: [Position] {
        switch self {
        case .point(let p): return [p]
        case .lineString(let line): return line
        case .polygon(let p): return p.rings.flatMap { $0 }
        case .multiPolygon(let parts): return parts.flatMap { $0.rings.flatMap { $0 } }
        }
    }
}
