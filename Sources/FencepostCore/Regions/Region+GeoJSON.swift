import Crypto
public import FencepostGeometry
import Foundation

// MARK: - Canonical GeoJSON

extension Region {
    /// The region as one GeoJSON Feature, in canonical form: the id in `properties`, defaults
    /// left out, keys sorted when encoded. Parsing this feature gives back the same region,
    /// which is what makes `regions list --format geojson` re-apply as a no-op.
    public var feature: JSONValue {
        let properties = Dictionary(canonicalProperties.map { ($0.key, $0.value) }, uniquingKeysWith: { own, _ in own })
        return .object([
            "type": .string("Feature"),
            "geometry": shape.geometry.geoJSON,
            "properties": .object(properties),
        ])
    }

    /// SHA-256 of the canonical feature: equal for equal content, whatever file or key order.
    public var contentHash: String {
        Self.sha256(canonicalFeatureBytes())
    }

    /// The canonical feature's text (``feature`` encoded canonically), written straight from the
    /// region: the same bytes as `feature.canonicalData()` without the tree in between, which
    /// for a polygon is an array per position (a plan hashes every region of the set).
    public func canonicalFeatureBytes() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(Self.estimatedSize(shape.geometry) + 128)
        output.append(contentsOf: #"{"geometry":"#.utf8)
        Self.writeGeometry(shape.geometry, extra: nil, to: &output)
        output.append(contentsOf: #","properties":"#.utf8)
        writeCanonicalProperties(to: &output)
        output.append(contentsOf: #","type":"Feature"}"#.utf8)
        return output
    }

    /// Appends the canonical feature's properties object, as its text holds it.
    func writeCanonicalProperties(to output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        for (index, member) in canonicalProperties.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSONValue.string(member.key).write(to: &output)
            output.append(UInt8(ascii: ":"))
            member.value.write(to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// The canonical feature's text and its ``contentHash``, from one encoding.
    public var canonicalFeatureAndHash: (text: String, contentHash: String) {
        let bytes = canonicalFeatureBytes()
        return (String(decoding: bytes, as: UTF8.self), Self.sha256(bytes))
    }

    /// The canonical feature as text, as the store keeps it.
    public var canonicalFeatureText: String {
        String(decoding: canonicalFeatureBytes(), as: UTF8.self)
    }

    /// The properties of ``feature`` and ``canonicalFeatureBytes()``, in key order: the region's
    /// own over any extra property of the same name. The one list of what a region writes.
    private var canonicalProperties: [(key: String, value: JSONValue)] {
        var properties: [(key: String, value: JSONValue)] = []
        properties.reserveCapacity(extraProperties.count + 4)
        properties.append(("id", .string(id)))
        if let name { properties.append(("name", .string(name))) }
        if !tags.isEmpty { properties.append(("tags", .array(tags.map(JSONValue.string)))) }
        if case .circle(_, let radius) = shape { properties.append(("radius", .number(radius))) }
        if case .corridor(let corridor) = shape { properties.append(("buffer", .number(corridor.buffer))) }
        if let value = settings.hysteresis { properties.append(("hysteresis", .number(value))) }
        if let value = settings.dwell { properties.append(("dwell", .number(value))) }
        if let value = settings.maxDwell { properties.append(("max_dwell", .number(value))) }
        if let value = settings.enterDelay { properties.append(("enter_delay", .number(value))) }
        if let value = settings.exitDelay { properties.append(("exit_delay", .number(value))) }
        if !settings.enabled { properties.append(("enabled", .bool(false))) }
        if let schedule = settings.schedule { properties.append(("schedule", schedule.json)) }
        if settings.expectsInside { properties.append(("expect", .string("inside"))) }
        if let value = settings.speedLimit { properties.append(("speed_limit_kmh", .number(value))) }
        if let value = settings.speedMinDuration { properties.append(("speed_min_duration", .number(value))) }
        if let layer = settings.layer { properties.append(("layer", .string(layer))) }
        if settings.privacy { properties.append(("privacy", .bool(true))) }
        if !audience.devices.isEmpty { properties.append(("devices", .array(audience.devices.map(JSONValue.string)))) }
        if !audience.groups.isEmpty { properties.append(("groups", .array(audience.groups.map(JSONValue.string)))) }
        let own = properties.count
        for (key, value) in extraProperties where !properties[..<own].contains(where: { $0.key == key }) {
            properties.append((key, value))
        }
        properties.sort { $0.key < $1.key }
        return properties
    }

    /// SHA-256 of the area alone (geometry and radius or buffer): what decides `region_changed`.
    public var geometryHash: String {
        Self.sha256(canonicalGeometryBytes())
    }

    /// What ``geometryHash`` hashes: the geometry object with the circle's `radius` or the
    /// corridor's `buffer` as a member, canonical.
    public func canonicalGeometryBytes() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(Self.estimatedSize(shape.geometry) + 64)
        switch shape {
        case .circle(let center, let radius):
            Self.writeGeometry(.point(center), extra: (radius: radius, buffer: nil), to: &output)
        case .corridor(let corridor):
            Self.writeGeometry(.lineString(corridor.line), extra: (radius: nil, buffer: corridor.buffer), to: &output)
        case .area(let area):
            Self.writeGeometry(area, extra: nil, to: &output)
        }
        return output
    }

    /// Writes `shape.geoJSON` canonically, with a circle's radius or a corridor's buffer as a
    /// member of the geometry when `extra` has one (keys in order: buffer, coordinates, radius, type).
    private static func writeGeometry(
        _ shape: Shape, extra: (radius: Double?, buffer: Double?)?, to output: inout [UInt8]
    ) {
        func number(_ value: Double) { output.append(contentsOf: JSONValue.format(value).utf8) }
        func position(_ p: Position) {
            output.append(UInt8(ascii: "["))
            number(p.lon)
            output.append(UInt8(ascii: ","))
            number(p.lat)
            output.append(UInt8(ascii: "]"))
        }
        func positions(_ list: [Position]) {
            output.append(UInt8(ascii: "["))
            for (index, p) in list.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                position(p)
            }
            output.append(UInt8(ascii: "]"))
        }
        func polygon(_ polygon: PolygonCoordinates) {
            output.append(UInt8(ascii: "["))
            for (index, ring) in polygon.rings.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                positions(ring)
            }
            output.append(UInt8(ascii: "]"))
        }
        output.append(UInt8(ascii: "{"))
        if let buffer = extra?.buffer {
            output.append(contentsOf: #""buffer":"#.utf8)
            number(buffer)
            output.append(UInt8(ascii: ","))
        }
        output.append(contentsOf: #""coordinates":"#.utf8)
        switch shape {
        case .point(let p): position(p)
        case .lineString(let line): positions(line)
        case .polygon(let p): polygon(p)
        case .multiPolygon(let parts):
            output.append(UInt8(ascii: "["))
            for (index, part) in parts.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                polygon(part)
            }
            output.append(UInt8(ascii: "]"))
        }
        if let radius = extra?.radius {
            output.append(contentsOf: #","radius":"#.utf8)
            number(radius)
        }
        output.append(contentsOf: #","type":"#.utf8)
        JSONValue.string(shape.geoJSONType).write(to: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// Roughly the bytes of a geometry's canonical text, to size the buffer once.
    private static func estimatedSize(_ shape: Shape) -> Int {
        switch shape {
        case .point: return 64
        case .lineString(let line): return 40 * line.count + 64
        case .polygon(let p): return 40 * p.rings.reduce(0) { $0 + $1.count } + 64
        case .multiPolygon(let parts): return 40 * parts.reduce(0) { $0 + $1.rings.reduce(0) { $0 + $1.count } } + 64
        }
    }

    private static func sha256(_ data: [UInt8]) -> String {
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
