package import FencepostCore

/// The placemarks of a KML document (Google My Maps, Google Earth) as a GeoJSON
/// FeatureCollection, for `regions import`: each Placemark with a Point, a Polygon (holes
/// kept) or a MultiGeometry of polygons becomes a feature; its `name` the feature's name, its
/// `id` attribute the feature's id, the names of the folders it sits in its `tags`. Placemarks
/// with only lines (LineString: a route) or no geometry are counted in `skipped`, by reason.
package struct KMLPlacemarks {
    package private(set) var features: [JSONValue] = []
    package private(set) var skipped: [String: Int] = [:]

    package var featureCollection: JSONValue {
        .object(["type": .string("FeatureCollection"), "features": .array(features)])
    }

    package init(source: ByteSource) throws(TraceReadError) {
        var parser = XMLPullParser(source: source)
        var folders: [String?] = []
        var path: [String] = []
        var placemark: Placemark?
        var text = ""
        while let event = try parser.next() {
            switch event {
            case .start(let name, let attributes):
                path.append(name)
                text = ""
                switch name {
                case "Folder", "Document": folders.append(nil)
                case "Placemark": placemark = Placemark(id: attributes["id"], line: parser.line)
                case "Polygon": placemark?.polygons.append([])
                case "LineString": placemark?.lines += 1
                default: break
                }
            case .text(let chunk):
                text += chunk
            case .end(let name):
                defer {
                    path.removeLast()
                    text = ""
                }
                let parent = path.dropLast().last
                switch name {
                case "name" where parent == "Placemark":
                    placemark?.name = text
                case "name" where parent == "Folder":
                    folders[folders.count - 1] = text
                case "description" where parent == "Placemark":
                    placemark?.description = text
                case "coordinates":
                    guard placemark != nil else { break }
                    let positions = try Self.positions(text, parser: parser)
                    if path.contains("Point") {
                        placemark?.point = positions.first
                    } else if path.contains("Polygon"), path.contains("LinearRing"), var current = placemark,
                        !current.polygons.isEmpty
                    {
                        current.polygons[current.polygons.count - 1].append(positions)
                        placemark = current
                    }
                case "Folder", "Document":
                    folders.removeLast()
                case "Placemark":
                    if let done = placemark { add(done, tags: folders.compactMap { $0 }) }
                    placemark = nil
                default:
                    break
                }
            }
        }
    }

    private struct Placemark {
        var id: String?
        var line: Int
        var name: String?
        var description: String?
        var point: [Double]?
        /// Each polygon's rings, the outer one first (KML writes outerBoundaryIs first).
        var polygons: [[[[Double]]]] = []
        var lines = 0
    }

    private mutating func add(_ placemark: Placemark, tags: [String]) {
        let geometry: JSONValue
        if let point = placemark.point {
            geometry = .object(["type": .string("Point"), "coordinates": Self.json(point)])
        } else if placemark.polygons.count == 1 {
            geometry = .object(["type": .string("Polygon"), "coordinates": Self.json(placemark.polygons[0])])
        } else if placemark.polygons.count > 1 {
            geometry = .object(["type": .string("MultiPolygon"), "coordinates": Self.json(placemark.polygons)])
        } else {
            skipped[placemark.lines > 0 ? "line (a route, not an area)" : "no geometry", default: 0] += 1
            return
        }
        var properties: [String: JSONValue] = [:]
        if let name = placemark.name { properties["name"] = .string(name) }
        if let description = placemark.description { properties["description"] = .string(description) }
        if !tags.isEmpty { properties["tags"] = .array(tags.map(JSONValue.string)) }
        var feature: [String: JSONValue] = [
            "type": .string("Feature"), "geometry": geometry, "properties": .object(properties),
        ]
        if let id = placemark.id { feature["id"] = .string(id) }
        features.append(.object(feature))
    }

    /// `lon,lat[,alt]` tuples separated by whitespace.
    private static func positions(_ text: String, parser: XMLPullParser) throws(TraceReadError) -> [[Double]] {
        var positions: [[Double]] = []
        for tuple in text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }) {
            let numbers = tuple.split(separator: ",").map { Double($0) }
            guard numbers.count >= 2, let lon = numbers[0], let lat = numbers[1] else {
                throw TraceReadError(
                    file: parser.name, line: parser.line,
                    reason: "coordinates must be lon,lat[,alt]; found \"\(tuple)\"")
            }
            positions.append([lon, lat])
        }
        return positions
    }

    private static func json(_ value: [Double]) -> JSONValue { .array(value.map(JSONValue.number)) }
    private static func json(_ value: [[[Double]]]) -> JSONValue { .array(value.map { .array($0.map(json)) }) }
    private static func json(_ value: [[[[Double]]]]) -> JSONValue { .array(value.map(json)) }
}
