/// How third-party GeoJSON (open-data districts, POI lists) becomes a region config.
public struct RegionImportOptions: Sendable {
    /// The property whose value becomes each region's id; nil uses the existing id, else the index.
    public var idProperty: String?
    /// Put before every id, such as `toronto:`; keeps regions from different sources apart.
    public var idPrefix: String
    /// The property whose value becomes each region's name.
    public var nameProperty: String?
    /// The radius in metres given to Point features that have none.
    public var radius: Double?

    public init(idProperty: String? = nil, idPrefix: String = "", nameProperty: String? = nil, radius: Double? = nil) {
        self.idProperty = idProperty
        self.idPrefix = idPrefix
        self.nameProperty = nameProperty
        self.radius = radius
    }
}

/// Rewrites a GeoJSON FeatureCollection into a region config: ids made from a property and
/// made safe, names copied, radii given to points. Other properties are kept; the result is
/// then validated like any config, so bad geometry is still refused with its reason.
public enum RegionImport {
    public static func convert(_ document: JSONValue, options: RegionImportOptions) -> JSONValue {
        guard case .object(var collection) = document, let features = document["features"]?.arrayValue else {
            return document  // not a FeatureCollection: validation explains why
        }
        collection["features"] = .array(
            features.enumerated().map { index, feature in
                convert(feature, index: index, options: options)
            })
        return .object(collection)
    }

    private static func convert(_ feature: JSONValue, index: Int, options: RegionImportOptions) -> JSONValue {
        guard case .object(var members) = feature else { return feature }
        var properties = feature["properties"]?.objectValue ?? [:]
        let rawID = options.idProperty.flatMap { properties[$0] } ?? properties["id"] ?? feature["id"]
        let idText = rawID.flatMap(text) ?? String(index)
        properties["id"] = .string(options.idPrefix + safeID(idText))
        if let nameProperty = options.nameProperty, let name = properties[nameProperty].flatMap(text) {
            properties["name"] = .string(name)
        }
        if feature["geometry"]?["type"]?.stringValue == "Point", properties["radius"] == nil,
            let radius = options.radius
        {
            properties["radius"] = .number(radius)
        }
        members["properties"] = .object(properties)
        members["id"] = nil
        return .object(members)
    }

    private static func text(_ value: JSONValue) -> String? {
        switch value {
        case .string(let string): return string
        case .number(let number) where number == number.rounded() && abs(number) < 1e15: return String(Int64(number))
        case .number(let number): return String(number)
        default: return nil
        }
    }

    /// Letters, digits and `._:-` kept; runs of anything else become one `-`.
    static func safeID(_ text: String) -> String {
        var result = ""
        for character in text {
            if character.isASCII, character.isLetter || character.isNumber || "._:-".contains(character) {
                result.append(character)
            } else if result.last != "-" {
                result.append("-")
            }
        }
        while result.hasSuffix("-") { result.removeLast() }
        while result.hasPrefix("-") { result.removeFirst() }
        return result.isEmpty ? "region" : result
    }
}
