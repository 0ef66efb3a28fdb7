import FencepostGeometry

/// Reads one GeoJSON feature into a ``Region``, collecting every problem it finds.
struct FeatureReader {
    let feature: JSONValue
    /// The geometry as a stored region's compact form holds it (``RegionCompactForm``), read
    /// instead of the feature's: it was checked when the region was applied.
    let storedGeometry: Shape?
    private(set) var id: String?
    var problems: [RegionConfigProblem] = []

    /// Properties with a meaning to Fencepost; everything else is kept as given.
    static let knownProperties: Set<String> = [
        "id", "name", "tags", "radius", "hysteresis", "dwell", "enter_delay", "exit_delay", "enabled", "devices",
        "groups", "max_dwell", "schedule", "expect", "buffer", "speed_limit_kmh", "speed_min_duration", "layer",
        "privacy",
    ]

    init(feature: JSONValue) {
        self.feature = feature
        self.storedGeometry = nil
    }

    /// A stored region's properties with its geometry as decoded from its compact form.
    init(properties: JSONValue, storedGeometry: Shape) {
        self.feature = .object(["type": .string("Feature"), "properties": properties])
        self.storedGeometry = storedGeometry
    }

    /// The region, or nil when `problems` says why not. `validatingGeometry` false skips GEOS's
    /// validity check of areas: for features the store wrote, checked when they were applied.
    mutating func read(context: GEOSContext, validatingGeometry: Bool = true) -> Region? {
        guard case .object = feature else {
            problems.append(.malformedFeature("expected an object, found a JSON \(feature.typeName)"))
            return nil
        }
        guard feature["type"]?.stringValue == "Feature" else {
            problems.append(.malformedFeature("its type must be \"Feature\""))
            return nil
        }
        let properties: FeatureProperties
        switch feature["properties"] {
        case nil, .null?: properties = FeatureProperties([:])
        case .object(let members)?: properties = FeatureProperties(members)
        case let other?:
            problems.append(.malformedFeature("properties must be an object, found a JSON \(other.typeName)"))
            return nil
        }
        let id = readID(properties)
        let shape = readShape(properties, context: context, validating: validatingGeometry)
        let settings = readSettings(properties)
        let name = readName(properties)
        let tags = readTags(properties)
        let audience = RegionAudience(
            devices: readSelectors(properties, "devices"), groups: readSelectors(properties, "groups"))
        guard problems.isEmpty, let id, let shape else { return nil }
        return Region(
            id: id, name: name, tags: tags, shape: shape, settings: settings, audience: audience,
            extraProperties: properties.members.filter { !Self.knownProperties.contains($0.key) })
    }

    // MARK: - Identity and settings

    private mutating func readID(_ properties: FeatureProperties) -> String? {
        guard let raw = properties["id"] ?? feature["id"], let text = Self.idText(raw) else {
            problems.append(.missingID)
            return nil
        }
        id = text
        guard !text.isEmpty, text.utf8.allSatisfy(Self.isIDByte) else {
            problems.append(.invalidID(text))
            return nil
        }
        return text
    }

    /// A string id, or an integral number written without a fraction (GeoJSON allows both).
    private static func idText(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): return text
        case .number(let number) where number == number.rounded() && abs(number) < 1e15: return String(Int64(number))
        default: return nil
        }
    }

    private static func isIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
            UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    private mutating func readName(_ properties: FeatureProperties) -> String? {
        switch properties["name"] {
        case nil, .null?: return nil
        case .string(let name)?: return name
        case let other?:
            problems.append(.invalidProperty(name: "name", reason: "must be a string, found a JSON \(other.typeName)"))
            return nil
        }
    }

    private mutating func readTags(_ properties: FeatureProperties) -> [String] {
        switch properties["tags"] {
        case nil, .null?: return []
        case .array(let items)?:
            let tags = items.compactMap(\.stringValue)
            if tags.count == items.count { return tags }
        default: break
        }
        problems.append(.invalidProperty(name: "tags", reason: "must be an array of strings"))
        return []
    }

    /// `devices` (ids or patterns) or `groups` (names): an array of non-empty strings, each
    /// at most 200 bytes and without control characters.
    private mutating func readSelectors(_ properties: FeatureProperties, _ name: String) -> [String] {
        switch properties[name] {
        case nil, .null?: return []
        case .array(let items)?:
            let selectors = items.compactMap(\.stringValue)
            if selectors.count == items.count,
                selectors.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 200 && !$0.utf8.contains(where: { $0 < 0x20 }) })
            {
                return selectors
            }
        default: break
        }
        let what = name == "devices" ? "device ids or patterns (`truck-*`)" : "group names"
        problems.append(.invalidProperty(name: name, reason: "must be an array of \(what), each a non-empty string"))
        return []
    }

    private mutating func readSettings(_ properties: FeatureProperties) -> RegionSettings {
        var settings = RegionSettings()
        settings.hysteresis = readNumber(properties, "hysteresis", allowZero: true, limit: RegionLimits.hysteresis)
        settings.dwell = readNumber(properties, "dwell", allowZero: false, limit: RegionLimits.dwell)
        settings.maxDwell = readNumber(properties, "max_dwell", allowZero: false, limit: RegionLimits.dwell)
        settings.enterDelay = readNumber(properties, "enter_delay", allowZero: true, limit: RegionLimits.delay)
        settings.exitDelay = readNumber(properties, "exit_delay", allowZero: true, limit: RegionLimits.delay)
        settings.schedule = readSchedule(properties)
        settings.speedLimit = readNumber(properties, "speed_limit_kmh", allowZero: false, limit: RegionLimits.speed)
        settings.speedMinDuration = readNumber(
            properties, "speed_min_duration", allowZero: true, limit: RegionLimits.delay)
        if settings.speedMinDuration != nil, settings.speedLimit == nil {
            problems.append(
                .invalidProperty(name: "speed_min_duration", reason: "needs speed_limit_kmh, the limit it is for"))
        }
        switch properties["expect"] {
        case nil, .null?: break
        case .string("inside")?: settings.expectsInside = true
        case .string(let other)?:
            problems.append(.invalidProperty(name: "expect", reason: "must be \"inside\", got \"\(other)\""))
        case let other?:
            problems.append(
                .invalidProperty(name: "expect", reason: "must be \"inside\", found a JSON \(other.typeName)"))
        }
        switch properties["layer"] {
        case nil, .null?: break
        case .string(let layer)? where !layer.isEmpty: settings.layer = layer
        case .string?:
            problems.append(.invalidProperty(name: "layer", reason: "must be a non-empty name"))
        case let other?:
            problems.append(.invalidProperty(name: "layer", reason: "must be a name, found a JSON \(other.typeName)"))
        }
        switch properties["privacy"] {
        case nil, .null?: break
        case .bool(let privacy)?: settings.privacy = privacy
        case let other?:
            problems.append(
                .invalidProperty(name: "privacy", reason: "must be true or false, found a JSON \(other.typeName)"))
        }
        switch properties["enabled"] {
        case nil, .null?: break
        case .bool(let enabled)?: settings.enabled = enabled
        case let other?:
            problems.append(
                .invalidProperty(name: "enabled", reason: "must be true or false, found a JSON \(other.typeName)"))
        }
        return settings
    }

    private mutating func readNumber(
        _ properties: FeatureProperties, _ name: String, allowZero: Bool, limit: RegionLimits.Limit
    ) -> Double? {
        switch properties[name] {
        case nil, .null?:
            return nil
        case .number(let value)? where value > limit.maximum:
            problems.append(.invalidProperty(name: name, reason: limit.refusal(of: value)))
        case .number(let value)? where value > 0 || (allowZero && value == 0):
            return value
        case .number(let value)?:
            problems.append(
                .invalidProperty(
                    name: name, reason: "must be \(allowZero ? "0 or more" : "greater than 0"), got \(value)"))
        case let other?:
            problems.append(.invalidProperty(name: name, reason: "must be a number, found a JSON \(other.typeName)"))
        }
        return nil
    }

    // MARK: - Geometry

    private mutating func readShape(_ properties: FeatureProperties, context: GEOSContext, validating: Bool)
        -> RegionShape?
    {
        if let storedGeometry { return readShape(stored: storedGeometry, properties, context: context) }
        guard let geometry = feature["geometry"], case .object = geometry else {
            problems.append(.malformedFeature("missing geometry"))
            return nil
        }
        guard let type = geometry["type"]?.stringValue else {
            problems.append(.malformedFeature("geometry has no type"))
            return nil
        }
        guard let coordinates = geometry["coordinates"] else {
            if ["Point", "LineString", "Polygon", "MultiPolygon"].contains(type) {
                problems.append(.malformedCoordinates("\(type) has no coordinates"))
            } else {
                problems.append(.unsupportedGeometry(type))
            }
            return nil
        }
        switch type {
        case "Point":
            let center = readPosition(coordinates)
            let radius = readRadius(properties)
            guard let center, let radius else { return nil }
            return .circle(center: center, radius: radius)
        case "LineString":
            return readCorridor(coordinates, properties, context: context)
        case "Polygon":
            guard let polygon = readPolygon(coordinates) else { return nil }
            return validating ? validated(.polygon(polygon), context: context) : .area(.polygon(polygon))
        case "MultiPolygon":
            guard let items = coordinates.arrayValue, !items.isEmpty else {
                problems.append(.malformedCoordinates("MultiPolygon coordinates must be a non-empty array of polygons"))
                return nil
            }
            var polygons: [PolygonCoordinates] = []
            for item in items {
                guard let polygon = readPolygon(item) else { return nil }
                polygons.append(polygon)
            }
            return validating ? validated(.multiPolygon(polygons), context: context) : .area(.multiPolygon(polygons))
        default:
            problems.append(.unsupportedGeometry(type))
            return nil
        }
    }

    /// The shape of a stored geometry: its positions as they were checked when applied, its
    /// radius or buffer read from the properties as a feature's are.
    private mutating func readShape(stored geometry: Shape, _ properties: FeatureProperties, context: GEOSContext)
        -> RegionShape?
    {
        switch geometry {
        case .point(let center):
            guard let radius = readRadius(properties) else { return nil }
            return .circle(center: center, radius: radius)
        case .lineString(let line):
            guard let buffer = readBuffer(properties) else { return nil }
            do {
                return .corridor(try Corridor(line: line, buffer: buffer, context: context))
            } catch {
                problems.append(.invalidGeometry(reason: "\(error)", location: nil))
                return nil
            }
        case .polygon, .multiPolygon:
            return .area(geometry)
        }
    }

    /// A LineString with `buffer` metres: a corridor. Two positions at least, not all the same.
    private mutating func readCorridor(
        _ coordinates: JSONValue, _ properties: FeatureProperties, context: GEOSContext
    )
        -> RegionShape?
    {
        let buffer = readBuffer(properties)
        guard let items = coordinates.arrayValue, items.count >= 2 else {
            problems.append(.malformedCoordinates("a LineString needs an array of at least two positions"))
            return nil
        }
        var line: [Position] = []
        for item in items {
            guard let position = readPosition(item) else { return nil }
            line.append(position)
        }
        guard let buffer else { return nil }
        guard line.contains(where: { $0 != line[0] }) else {
            problems.append(.malformedCoordinates("a LineString's positions are all the same point"))
            return nil
        }
        do {
            return .corridor(try Corridor(line: line, buffer: buffer, context: context))
        } catch {
            problems.append(.invalidGeometry(reason: "\(error)", location: nil))
            return nil
        }
    }

    private mutating func readBuffer(_ properties: FeatureProperties) -> Double? {
        switch properties["buffer"] {
        case nil, .null?:
            problems.append(
                .invalidProperty(
                    name: "buffer", reason: "a LineString is a corridor: it needs buffer, the metres either side"))
        case .number(let buffer)? where buffer > RegionLimits.buffer.maximum:
            problems.append(.invalidProperty(name: "buffer", reason: RegionLimits.buffer.refusal(of: buffer)))
        case .number(let buffer)? where buffer > 0:
            return buffer
        case .number(let buffer)?:
            problems.append(.invalidProperty(name: "buffer", reason: "must be greater than 0, got \(buffer)"))
        case let other?:
            problems.append(
                .invalidProperty(name: "buffer", reason: "must be a number of metres, found a JSON \(other.typeName)"))
        }
        return nil
    }

    private mutating func readRadius(_ properties: FeatureProperties) -> Double? {
        switch properties["radius"] {
        case nil, .null?:
            problems.append(.missingRadius)
        case .number(let radius)? where radius > RegionLimits.radius.maximum:
            problems.append(.invalidProperty(name: "radius", reason: RegionLimits.radius.refusal(of: radius)))
        case .number(let radius)? where radius > 0:
            return radius
        case .number(let radius)?:
            problems.append(.nonPositiveRadius(radius))
        case let other?:
            problems.append(
                .invalidProperty(name: "radius", reason: "must be a number of metres, found a JSON \(other.typeName)"))
        }
        return nil
    }

    private mutating func readPolygon(_ value: JSONValue) -> PolygonCoordinates? {
        guard let ringValues = value.arrayValue, !ringValues.isEmpty else {
            problems.append(.malformedCoordinates("a polygon must be a non-empty array of rings"))
            return nil
        }
        var rings: [[Position]] = []
        for (ringIndex, ringValue) in ringValues.enumerated() {
            guard let positionValues = ringValue.arrayValue else {
                problems.append(.malformedCoordinates("ring \(ringIndex) must be an array of positions"))
                return nil
            }
            var ring: [Position] = []
            ring.reserveCapacity(positionValues.count)
            for positionValue in positionValues {
                guard let position = readPosition(positionValue) else { return nil }
                ring.append(position)
            }
            guard ring.count >= 4 else {
                problems.append(.tooFewPositions(ring: ringIndex, count: ring.count))
                return nil
            }
            guard ring.first == ring.last else {
                problems.append(.unclosedRing(ring: ringIndex))
                return nil
            }
            rings.append(ring)
        }
        return PolygonCoordinates(rings: rings)
    }

    private mutating func readPosition(_ value: JSONValue) -> Position? {
        guard let items = value.arrayValue, items.count >= 2,
            let lon = items[0].numberValue, let lat = items[1].numberValue
        else {
            problems.append(.malformedCoordinates("a position must be an array of two numbers [lon, lat]"))
            return nil
        }
        guard (-180...180).contains(lon), (-90...90).contains(lat) else {
            problems.append(.coordinateOutOfRange(lon: lon, lat: lat, hint: Self.hint(lon: lon, lat: lat)))
            return nil
        }
        return Position(lon: lon, lat: lat)
    }

    /// Metre-sized values are a projected system; a valid pair in the wrong order is swapped.
    private static func hint(lon: Double, lat: Double) -> RegionConfigProblem.CoordinateHint? {
        if abs(lon) > 360 || abs(lat) > 360 { return .projected }
        if abs(lat) > 90, abs(lat) <= 180, abs(lon) <= 90 { return .swapped }
        return nil
    }

    /// The shape if GEOS finds it valid; otherwise GEOS's reason and location as a problem.
    private mutating func validated(_ shape: Shape, context: GEOSContext) -> RegionShape? {
        do {
            let geometry = try Geometry(shape: shape, context: context)
            if let problem = try geometry.validityProblem() {
                problems.append(
                    .invalidGeometry(
                        reason: problem.reason, location: problem.location.map { "[\($0.lon), \($0.lat)]" }))
                return nil
            }
        } catch {
            problems.append(.invalidGeometry(reason: "\(error)", location: nil))
            return nil
        }
        return .area(shape)
    }
}
