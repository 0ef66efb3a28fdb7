import FencepostGeometry

// MARK: - Compact stored form

/// A region as the store keeps it beside its canonical feature, for reading back fast: the
/// geometry's coordinates as the doubles themselves (8 bytes each, little-endian), then the
/// canonical properties object as text. Reading it back parses only the properties (a few
/// dozen bytes for most regions) and no coordinate text: a million stored regions were most of
/// a service's start-up in JSON.
///
/// Layout: a format byte (1); a geometry kind (0 Point, 1 LineString, 2 Polygon, 3
/// MultiPolygon); for a Point two doubles (lon, lat); for a LineString a count and that many
/// positions; for a Polygon a ring count and each ring as a LineString; for a MultiPolygon a
/// polygon count and each polygon; counts are UInt32, little-endian. The rest is the
/// properties object, exactly as the canonical feature writes it.
public enum RegionCompactForm {
    static let format: UInt8 = 1

    /// The compact form of `region`. A coordinate of -0 is written as 0, as the canonical
    /// feature writes it, so that both forms read back the same region.
    public static func encode(_ region: Region) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(region.estimatedCompactSize)
        output.append(format)
        func double(_ value: Double) {
            var bits = (value == 0 ? 0.0 : value).bitPattern.littleEndian
            withUnsafeBytes(of: &bits) { output.append(contentsOf: $0) }
        }
        func count(_ value: Int) {
            var bits = UInt32(value).littleEndian
            withUnsafeBytes(of: &bits) { output.append(contentsOf: $0) }
        }
        func positions(_ list: [Position]) {
            count(list.count)
            for position in list {
                double(position.lon)
                double(position.lat)
            }
        }
        func polygon(_ polygon: PolygonCoordinates) {
            count(polygon.rings.count)
            for ring in polygon.rings { positions(ring) }
        }
        switch region.shape.geometry {
        case .point(let position):
            output.append(0)
            double(position.lon)
            double(position.lat)
        case .lineString(let line):
            output.append(1)
            positions(line)
        case .polygon(let p):
            output.append(2)
            polygon(p)
        case .multiPolygon(let parts):
            output.append(3)
            count(parts.count)
            for part in parts { polygon(part) }
        }
        region.writeCanonicalProperties(to: &output)
        return output
    }

    /// The geometry and the properties' text of a compact form; nil when the bytes are not one.
    static func decode(_ bytes: [UInt8]) -> (geometry: Shape, properties: ArraySlice<UInt8>)? {
        var reader = Reader(bytes: bytes)
        guard reader.byte() == format, let kind = reader.byte() else { return nil }
        let geometry: Shape
        switch kind {
        case 0:
            guard let position = reader.position() else { return nil }
            geometry = .point(position)
        case 1:
            guard let line = reader.positions() else { return nil }
            geometry = .lineString(line)
        case 2:
            guard let polygon = reader.polygon() else { return nil }
            geometry = .polygon(polygon)
        case 3:
            guard let count = reader.count() else { return nil }
            var parts: [PolygonCoordinates] = []
            parts.reserveCapacity(count)
            for _ in 0..<count {
                guard let polygon = reader.polygon() else { return nil }
                parts.append(polygon)
            }
            geometry = .multiPolygon(parts)
        default:
            return nil
        }
        return (geometry, bytes[reader.offset...])
    }

    /// A cursor over the bytes; every read checks the bytes left.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func count() -> Int? {
            guard offset + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for shift in 0..<4 { value |= UInt32(bytes[offset + shift]) << (8 * UInt32(shift)) }
            offset += 4
            let count = Int(value)
            // Each item is at least 4 bytes: a count beyond the bytes left is not a compact form.
            return count <= (bytes.count - offset) / 4 ? count : nil
        }

        mutating func position() -> Position? {
            guard offset + 16 <= bytes.count else { return nil }
            let (lon, lat) = bytes.withUnsafeBytes { raw in
                (
                    Double(
                        bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))),
                    Double(
                        bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
                    )
                )
            }
            offset += 16
            return Position(lon: lon, lat: lat)
        }

        mutating func positions() -> [Position]? {
            guard let count = count() else { return nil }
            var list: [Position] = []
            list.reserveCapacity(count)
            for _ in 0..<count {
                guard let position = position() else { return nil }
                list.append(position)
            }
            return list
        }

        mutating func polygon() -> PolygonCoordinates? {
            guard let count = count() else { return nil }
            var rings: [[Position]] = []
            rings.reserveCapacity(count)
            for _ in 0..<count {
                guard let ring = positions() else { return nil }
                rings.append(ring)
            }
            return PolygonCoordinates(rings: rings)
        }
    }
}

extension Region {
    /// Roughly the bytes of the compact form, to size its buffer once.
    fileprivate var estimatedCompactSize: Int {
        switch shape.geometry {
        case .point: return 18 + 96
        case .lineString(let line): return 16 * line.count + 96
        case .polygon(let p): return 16 * p.rings.reduce(0) { $0 + $1.count } + 96
        case .multiPolygon(let parts): return 16 * parts.reduce(0) { $0 + $1.rings.reduce(0) { $0 + $1.count } } + 96
        }
    }
}
