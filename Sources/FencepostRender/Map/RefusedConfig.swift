package import FencepostCore
package import FencepostGeometry
package import Foundation

/// A region config that was refused, as a map shows it: every feature that has drawable
/// coordinates is sketched as it was written (swapped coordinates swapped back, so the user
/// sees where they were meant to be), marked where GEOS located the problem, and numbered
/// after the list of reasons printed beside the map.
package struct RefusedConfig: Sendable {
    /// One refused feature's sketch.
    package struct Feature: Sendable {
        /// The numbers of its problems in ``RefusedConfig/problems``.
        package var numbers: [Int]
        package var file: String
        package var index: Int
        package var id: String?
        /// A polygon's rings (exterior first), one entry per polygon of a multipolygon.
        package var polygons: [[[Position]]]
        /// The centre and radius of a circle; a radius of 0 when it is missing or not positive.
        package var circle: (center: Position, radius: Double)?
        /// The coordinates were read as [lat, lon] and are drawn swapped back.
        package var swapped: Bool
        /// Where the problem is: GEOS's location of a self-intersection, a ring's open ends.
        package var marks: [Position]

        /// Every polygon's rings in turn.
        package var rings: [[Position]] { polygons.flatMap { $0 } }

        var drawable: [Position] {
            rings.flatMap { $0 } + (circle.map { [$0.center] } ?? []) + marks
        }
    }

    package var features: [Feature]
    /// Every problem of the config, as `regions plan` prints it, numbered from 1.
    package var problems: [String]

    /// Sketches the refused features. `sources` holds each file's bytes by the name the issues
    /// use; a file missing there, or a feature without readable coordinates, is only listed.
    package static func sketch(
        _ error: RegionConfigError, sources: [String: Data], context: GEOSContext = GEOSContext()
    ) -> RefusedConfig {
        var documents: [String: [JSONValue]] = [:]
        for (file, data) in sources {
            documents[file] = (try? JSONParser.parse(data))?["features"]?.arrayValue
        }
        var features: [Feature] = []
        var slot: [String: Int] = [:]  // "file\u{0}index" → features index
        for (offset, issue) in error.issues.enumerated() {
            guard let index = issue.featureIndex, let items = documents[issue.file], index < items.count else {
                continue
            }
            let key = "\(issue.file)\u{0}\(index)"
            if let existing = slot[key] {
                features[existing].numbers.append(offset + 1)
                continue
            }
            let swapped = error.issues.contains {
                $0.file == issue.file && $0.featureIndex == index
                    && {
                        if case .coordinateOutOfRange(_, _, .swapped?) = $0.problem {
                            return true
                        } else {
                            return false
                        }
                    }($0)
            }
            guard var feature = read(items[index], swapped: swapped) else { continue }
            feature.numbers = [offset + 1]
            feature.file = issue.file
            feature.index = index
            feature.id = issue.featureID
            feature.marks = marks(of: feature, context: context)
            slot[key] = features.count
            features.append(feature)
        }
        return RefusedConfig(features: features, problems: error.issues.map(\.description))
    }

    // MARK: - Lenient reading

    /// The feature's coordinates, read whatever is wrong with them; nil when there are none
    /// that can be drawn.
    private static func read(_ feature: JSONValue, swapped: Bool) -> Feature? {
        guard let geometry = feature["geometry"], let type = geometry["type"]?.stringValue,
            let coordinates = geometry["coordinates"]
        else { return nil }
        func position(_ value: JSONValue) -> Position? {
            guard let items = value.arrayValue, items.count >= 2, let a = items[0].numberValue,
                let b = items[1].numberValue
            else { return nil }
            let candidate = swapped ? Position(lon: b, lat: a) : Position(lon: a, lat: b)
            guard (-180...180).contains(candidate.lon), (-90...90).contains(candidate.lat) else { return nil }
            return candidate
        }
        func rings(_ polygon: JSONValue) -> [[Position]] {
            (polygon.arrayValue ?? []).map { ring in (ring.arrayValue ?? []).compactMap(position) }.filter {
                !$0.isEmpty
            }
        }
        var sketch = Feature(
            numbers: [], file: "", index: 0, id: nil, polygons: [], circle: nil, swapped: swapped, marks: [])
        switch type {
        case "Point":
            guard let center = position(coordinates) else { return nil }
            sketch.circle = (center, max(feature["properties"]?["radius"]?.numberValue ?? 0, 0))
        case "Polygon":
            sketch.polygons = [rings(coordinates)]
        case "MultiPolygon":
            sketch.polygons = (coordinates.arrayValue ?? []).map(rings)
        default:
            return nil
        }
        return sketch.circle == nil && sketch.rings.isEmpty ? nil : sketch
    }

    /// Where to put the cross: GEOS's location of an invalid polygon, else the open ends of
    /// an unclosed ring.
    private static func marks(of feature: Feature, context: GEOSContext) -> [Position] {
        guard !feature.rings.isEmpty else { return [] }
        var marks: [Position] = []
        for ring in feature.rings where ring.count >= 2 && ring.first != ring.last {
            marks += [ring.first!, ring.last!]
        }
        guard marks.isEmpty, feature.rings.allSatisfy({ $0.count >= 4 }) else { return marks }
        let polygons = feature.polygons.filter { !$0.isEmpty }.map(PolygonCoordinates.init(rings:))
        // The whole shape first; then each ring alone, which still finds a self-intersection
        // when the whole cannot be built.
        let shapes: [Shape] =
            [polygons.count == 1 ? .polygon(polygons[0]) : .multiPolygon(polygons)]
            + feature.rings.map { .polygon(PolygonCoordinates(rings: [$0])) }
        for shape in shapes {
            if let geometry = try? Geometry(shape: shape, context: context),
                let problem = try? geometry.validityProblem(),
                let location = problem.location
            {
                return [location]
            }
        }
        return marks
    }
}
