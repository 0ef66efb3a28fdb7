import Foundation

/// Distances and projections on the sphere the design fixes for Fencepost.
public enum Geodesy {
    // The constants are inlinable: the monitor reads them for most fixes, and a `static let` of
    // another module costs a lazy-initialisation check on every read.

    /// Mean Earth radius in metres (IUGG R1), used for every haversine distance.
    @inlinable public static var earthRadius: Double { 6_371_008.8 }

    /// Great-circle distance in metres between two positions (haversine formula).
    public static func distance(_ a: Position, _ b: Position) -> Double {
        distance(from: a, cosLatitude: cos(a.lat * .pi / 180), to: b)
    }

    /// The same, with `cos(a.lat * .pi / 180)` already known: for a fixed point, such as a
    /// circle's centre, measured against many others.
    public static func distance(from a: Position, cosLatitude cosLat1: Double, to b: Position) -> Double {
        let lat1 = a.lat * .pi / 180
        let lat2 = b.lat * .pi / 180
        let dLat = lat2 - lat1
        let dLon = (b.lon - a.lon) * .pi / 180
        let sinLat = sin(dLat / 2)
        let sinLon = sin(dLon / 2)
        let h = sinLat * sinLat + cosLat1 * cos(lat2) * sinLon * sinLon
        return 2 * earthRadius * asin(min(1, h.squareRoot()))
    }

    /// Metres spanned by one degree of latitude on the sphere.
    @inlinable public static var metresPerDegreeLatitude: Double { earthRadius * .pi / 180 }

    /// Metres spanned by one degree of longitude at the given latitude.
    public static func metresPerDegreeLongitude(atLatitude latitude: Double) -> Double {
        metresPerDegreeLatitude * cos(latitude * .pi / 180)
    }
}

/// A local equirectangular projection: lon/lat to metres east and north of an origin.
///
/// Accurate to well under a percent over a few kilometres, which is what metric distances to a
/// region's boundary need; not meant for continent-sized shapes.
public struct LocalProjection: Sendable, Hashable {
    public let origin: Position
    public let metresPerDegreeLon: Double
    public let metresPerDegreeLat: Double

    public init(origin: Position) {
        self.origin = origin
        self.metresPerDegreeLat = Geodesy.metresPerDegreeLatitude
        self.metresPerDegreeLon = Geodesy.metresPerDegreeLongitude(atLatitude: origin.lat)
    }

    /// A projection centred on the middle of an envelope.
    public init(centredOn envelope: Envelope) {
        self.init(origin: Position(lon: (envelope.minX + envelope.maxX) / 2, lat: (envelope.minY + envelope.maxY) / 2))
    }

    /// Metres east (x) and north (y) of the origin.
    public func project(_ position: Position) -> (x: Double, y: Double) {
        ((position.lon - origin.lon) * metresPerDegreeLon, (position.lat - origin.lat) * metresPerDegreeLat)
    }

    /// The position `x` metres east and `y` metres north of the origin.
    public func unproject(x: Double, y: Double) -> Position {
        Position(lon: origin.lon + x / metresPerDegreeLon, lat: origin.lat + y / metresPerDegreeLat)
    }

    /// The shape with every position projected to local metres (x stored as `lon`, y as `lat`).
    public func project(_ shape: Shape) -> Shape {
        Self.map(shape) {
            let (x, y) = project($0)
            return Position(lon: x, lat: y)
        }
    }

    /// A shape in local metres (x stored as `lon`, y as `lat`) back in lon/lat.
    public func unproject(_ shape: Shape) -> Shape {
        Self.map(shape) { unproject(x: $0.lon, y: $0.lat) }
    }

    private static func map(_ shape: Shape, _ map: (Position) -> Position) -> Shape {
        func mapPolygon(_ polygon: PolygonCoordinates) -> PolygonCoordinates {
            PolygonCoordinates(rings: polygon.rings.map { $0.map(map) })
        }
        switch shape {
        case .point(let position): return .point(map(position))
        case .lineString(let positions): return .lineString(positions.map(map))
        case .polygon(let polygon): return .polygon(mapPolygon(polygon))
        case .multiPolygon(let polygons): return .multiPolygon(polygons.map(mapPolygon))
        }
    }
}
