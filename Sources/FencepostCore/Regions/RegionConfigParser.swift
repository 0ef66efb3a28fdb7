public import FencepostGeometry
public import Foundation

/// The regions one config file declares, or the problems that keep it from being used.
public struct RegionFile: Sendable {
    public var file: String
    /// The valid regions, each with its feature index in the file.
    public var regions: [(index: Int, region: Region)]
    public var issues: [RegionConfigIssue]

    public init(file: String, regions: [(index: Int, region: Region)] = [], issues: [RegionConfigIssue] = []) {
        self.file = file
        self.regions = regions
        self.issues = issues
    }
}

/// Parses and validates region config files (GeoJSON FeatureCollections, RFC 7946).
///
/// Structural problems are found in Swift, where the message can be precise; polygon validity
/// (self-intersections and the like) comes from GEOS, with its reason and location. Every
/// problem in a file is collected, so one run tells the user everything to fix.
public final class RegionConfigParser {
    private let context: GEOSContext

    public init(context: GEOSContext = GEOSContext()) {
        self.context = context
    }

    /// Parses one file's bytes; `file` is the name used in messages.
    public func parse(_ data: Data, file: String) -> RegionFile {
        var result = RegionFile(file: file, regions: [], issues: [])
        func refuse(_ problem: RegionConfigProblem) -> RegionFile {
            result.issues.append(RegionConfigIssue(file: file, problem: problem))
            return result
        }
        let document: JSONValue
        do {
            document = try JSONParser.parse(data)
        } catch {
            return refuse(.invalidJSON(error))
        }
        guard document["type"]?.stringValue == "FeatureCollection" else {
            let found = document["type"]?.stringValue.map { "a \($0)" } ?? "a JSON \(document.typeName)"
            return refuse(.notFeatureCollection(found: found))
        }
        if let crs = Self.declaredCRS(document), !Self.isWGS84(crs) {
            return refuse(.projectedCRS(crs))
        }
        guard let features = document["features"]?.arrayValue else {
            return refuse(.notFeatureCollection(found: "a FeatureCollection without a features array"))
        }
        for (index, feature) in features.enumerated() {
            var reader = FeatureReader(feature: feature)
            if let region = reader.read(context: context) {
                result.regions.append((index, region))
            }
            for problem in reader.problems {
                result.issues.append(
                    RegionConfigIssue(file: file, featureIndex: index, featureID: reader.id, problem: problem))
            }
        }
        return result
    }

    /// Reads one GeoJSON Feature on its own, such as the canonical feature the store keeps.
    /// `defaultID` is the id of a feature that names none (`PUT /v1/regions/{id}` names it in
    /// the path): it is written into the feature's properties, as if the feature had it.
    public func region(fromFeature data: Data, source: String, defaultID: String? = nil) throws(RegionConfigError)
        -> Region
    {
        var feature: JSONValue
        do {
            feature = try JSONParser.parse(data)
        } catch {
            throw RegionConfigError(issues: [RegionConfigIssue(file: source, problem: .invalidJSON(error))])
        }
        if let defaultID, case .object(var members) = feature, members["id"] == nil, members["properties"]?["id"] == nil
        {
            var properties = members["properties"]?.objectValue ?? [:]
            properties["id"] = .string(defaultID)
            members["properties"] = .object(properties)
            feature = .object(members)
        }
        var reader = FeatureReader(feature: feature)
        guard let region = reader.read(context: context) else {
            throw RegionConfigError(
                issues: reader.problems.map {
                    RegionConfigIssue(file: source, featureIndex: 0, featureID: reader.id, problem: $0)
                })
        }
        return region
    }

    /// The name in a GeoJSON 2008 `crs` member, which RFC 7946 dropped but tools still write.
    private static func declaredCRS(_ document: JSONValue) -> String? {
        document["crs"]?["properties"]?["name"]?.stringValue
    }

    private static func isWGS84(_ crs: String) -> Bool {
        let upper = crs.uppercased()
        return upper.hasSuffix("CRS84") || upper.hasSuffix(":4326") || upper.hasSuffix("::4326")
    }
}

/// Combines parsed files into one region set, refusing the whole set if any file had a problem
/// or two features share an id.
public enum RegionConfig {
    public static func merge(_ files: [RegionFile]) throws(RegionConfigError) -> [Region] {
        var issues = files.flatMap(\.issues)
        var firstUse: [String: (file: String, index: Int)] = [:]
        var regions: [Region] = []
        for file in files {
            for (index, region) in file.regions {
                if let other = firstUse[region.id] {
                    issues.append(
                        RegionConfigIssue(
                            file: file.file, featureIndex: index, featureID: region.id,
                            problem: .duplicateID(region.id, otherFile: other.file, otherFeatureIndex: other.index)))
                } else {
                    firstUse[region.id] = (file.file, index)
                    regions.append(region)
                }
            }
        }
        guard issues.isEmpty else { throw RegionConfigError(issues: issues) }
        return regions.sorted { $0.id < $1.id }
    }
}
