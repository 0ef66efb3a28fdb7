package import FencepostGeometry
import Foundation

/// Web Mercator (EPSG:3857), the projection of every web map: x and y in metres on a sphere
/// of the WGS84 semi-major axis, north up. Conformal, so a small circle stays a circle.
package enum WebMercator {
    /// The sphere radius EPSG:3857 projects on (metres).
    package static let radius = 6_378_137.0
    /// Latitudes beyond this are cut off, as web maps do (the square world of tiles).
    package static let maxLatitude = 85.051_128_78

    /// Metres east and north on the projection plane.
    package static func project(_ position: Position) -> (x: Double, y: Double) {
        let lat = min(max(position.lat, -maxLatitude), maxLatitude) * .pi / 180
        return (radius * position.lon * .pi / 180, radius * log(tan(.pi / 4 + lat / 2)))
    }

    /// Ground metres (on Fencepost's sphere, the one distances use) per projected metre at a
    /// latitude: Mercator stretches everything by 1 / cos(latitude).
    package static func groundMetresPerProjectedMetre(atLatitude latitude: Double) -> Double {
        Geodesy.earthRadius / radius * cos(min(abs(latitude), maxLatitude) * .pi / 180)
    }
}

/// Where a map's content sits on the page: Web Mercator scaled and shifted into a frame of
/// `width` × `height` pixels, y growing downwards as in SVG.
package struct MapFrame: Sendable, Hashable {
    package let width: Double
    package let height: Double
    /// Pixels per projected metre.
    package let scale: Double
    /// The projected point at the frame's top-left corner.
    package let originX: Double
    package let originY: Double

    package init(width: Double, height: Double, scale: Double, originX: Double, originY: Double) {
        self.width = width
        self.height = height
        self.scale = scale
        self.originX = originX
        self.originY = originY
    }

    /// A frame `width` pixels wide fitted to `bounds` (lon/lat) with `padding` pixels on every
    /// side; its height follows the content's shape, kept between half and 1.25 times the width.
    /// Empty or point-like content gets a 1 km view around it.
    package init(fitting bounds: Envelope, width: Double, padding: Double) {
        let (x0, y0) = WebMercator.project(Position(lon: bounds.minX, lat: bounds.minY))
        let (x1, y1) = WebMercator.project(Position(lon: bounds.maxX, lat: bounds.maxY))
        let middleLat = (bounds.minY + bounds.maxY) / 2
        // At least 1 km of ground across, so a lone point is not a zoom into nothing.
        let minimumSpan = 1_000 / WebMercator.groundMetresPerProjectedMetre(atLatitude: middleLat)
        let spanX = max(x1 - x0, minimumSpan)
        let spanY = max(y1 - y0, minimumSpan / 2)
        let inner = max(width - 2 * padding, 1)
        let height = min(max(inner * spanY / spanX + 2 * padding, width * 0.5), width * 1.25)
        let scale = min(inner / spanX, max(height - 2 * padding, 1) / spanY)
        let centreX = (x0 + x1) / 2
        let centreY = (y0 + y1) / 2
        self.init(
            width: width, height: height.rounded(), scale: scale,
            originX: centreX - width / 2 / scale, originY: centreY + height.rounded() / 2 / scale)
    }

    /// The pixel a position falls on.
    package func point(_ position: Position) -> Point {
        let (x, y) = WebMercator.project(position)
        return Point(x: (x - originX) * scale, y: (originY - y) * scale)
    }

    /// Pixels per ground metre at a latitude.
    package func pixelsPerMetre(atLatitude latitude: Double) -> Double {
        scale / WebMercator.groundMetresPerProjectedMetre(atLatitude: latitude)
    }

    /// The latitude at the frame's vertical middle (where the scale bar measures).
    package var middleLatitude: Double {
        let y = originY - height / 2 / scale
        return (2 * atan(exp(y / WebMercator.radius)) - .pi / 2) * 180 / .pi
    }

    package func contains(_ point: Point, margin: Double = 0) -> Bool {
        point.x >= -margin && point.y >= -margin && point.x <= width + margin && point.y <= height + margin
    }
}

/// A point on the page, in pixels.
package struct Point: Sendable, Hashable {
    package var x: Double
    package var y: Double

    package init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    func distance(to other: Point) -> Double {
        ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
    }
}
