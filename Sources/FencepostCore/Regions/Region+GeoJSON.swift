import Crypto
public import FencepostGeometry
import Foundation

// MARK: - Canonical GeoJSON

extension Region {
    /// The region as one GeoJSON Feature, in canonical form: the id in `properties`, defaults
    /// left out, keys sorted when encoded. Parsing this feature gives back the same region,
    /// which is what makes `regions list --format geojson` re-apply as a no-op.
    public var feature: JSONValue {
        var properties = extraProperties
        properties["id"] = .string(id)
        if let name { properties["name"] = .string(name) }
        if !tags.isEmpty { properties["tags"] = .array(tags.map(JSONValue.string)) }
        if case .circle(_, let radius) = shape { properties["radius"] = .number(radius) }
        if case .corridor(let corridor) = shape { properties["buffer"] = .number(corridor.buffer) }
        if let value = settings.hysteresis { properties["hysteresis"] = .number(value) }
        if let value = settings.dwell { properties["dwell"] = .number(value) }
        if let value = settings.maxDwell { properties["max_dwell"] = .number(value) }
        if let value = settings.enterDelay { properties["enter_delay"] = .number(value) }
        if let value = settings.exitDelay { properties["exit_delay"] = .number(value) }
        if !settings.enabled { properties["enabled"] = .bool(false) }
        if let schedule = settings.schedule { properties["schedule"] = schedule.json }
        if settings.expectsInside { properties["expect"] = .string("inside") }
        if let value = settings.speedLimit { properties["speed_limit_kmh"] = .number(value) }
        if let value = settings.speedMinDuration { properties["speed_min_duration"] = .number(value) }
        if !audience.devices.isEmpty { properties["devices"] = .array(audience.devices.map(JSONValue.string)) }
        if !audience.groups.isEmpty { properties["groups"] = .array(audience.groups.map(JSONValue.string)) }
        return .object([
            "type": .string("Feature"),
            "geometry": shape.geometry.geoJSON,
            "properties": .object(properties),
        ])
    }

    /// SHA-256 of the canonical feature: equal for equal content, whatever file or key order.
    public var contentHash: String {
        Self.sha256(feature.canonicalData())
    }

    /// SHA-256 of the area alone (geometry and radius or buffer): what decides `region_changed`.
    public var geometryHash: String {
        var geometry = shape.geometry.geoJSON
        if case .circle(_, let radius) = shape, case .object(var members) = geometry {
            members["radius"] = .number(radius)
            geometry = .object(members)
        }
        if case .corridor(let corridor) = shape, case .object(var members) = geometry {
            members["buffer"] = .number(corridor.buffer)
            geometry = .object(members)
        }
        return Self.sha256(geometry.canonicalData())
    }

    private static func sha256(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: data) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}

extension Shape {
    /// The GeoJSON geometry object for this shape.
    public var geoJSON: JSONValue {
        func position(_ p: Position) -> JSONValue { .array([.number(p.lon), .number(p.lat)]) }
        func polygon(_ polygon: PolygonCoordinates) -> JSONValue {
            .array(polygon.rings.map { .array($0.map(position)) })
        }
        let coordinates: JSONValue
        switch self {
        case .point(let p): coordinates = position(p)
        case .lineString(let line): coordinates = .array(line.map(position))
        case .polygon(let p): coordinates = polygon(p)
        case .multiPolygon(let parts): coordinates = .array(parts.map(polygon))
        }
        return .object(["type": .string(geoJSONType), "coordinates": coordinates])
    }
}

extension Collection where Element == Region {
    /// The regions as one GeoJSON FeatureCollection, in canonical form.
    public var featureCollection: JSONValue {
        .object(["type": .string("FeatureCollection"), "features": .array(map(\.feature))])
    }
}
