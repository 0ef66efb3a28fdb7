public import FencepostGeometry
public import Foundation

/// The regions one config file declares, or the problems that keep it from being used.
public struct RegionFile: Sendable {
    public var file: String
    /// The valid regions, each with its feature index in the file.
    public var regions: [(index: Int, region: Region)]
    public var issues: [RegionConfigIssue]
    /// The fingerprint of each region's feature text, aligned with `regions`, when the reader
    /// was asked for them (``RegionSource``); empty otherwise.
    public var sources: [SourceFingerprint?] = []
    /// Features recognised by their fingerprint as stored regions, unchanged (not read).
    public var recognized: [(index: Int, region: RecognizedRegion)] = []

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
        parse(Array(data), file: file)
    }

    /// Parses one file's UTF-8 bytes; `file` is the name used in messages.
    ///
    /// With `sources`, each feature's fingerprint is taken (``RegionFile/sources``), and a
    /// feature whose fingerprint the index holds is recognised as that stored region without
    /// being read (``RegionFile/recognized``).
    ///
    /// The features array is read feature by feature, in batches read into regions across the
    /// cores, so neither the whole document's tree nor a second copy of the text is ever held:
    /// a million regions are 400 MB of GeoJSON. The outcome is the one a whole-tree parse
    /// gives: a syntax error anywhere refuses the file with that error alone, the last of
    /// repeated members wins, and the document's own checks come before any feature's.
    public func parse(_ bytes: [UInt8], file: String, sources: RegionSourceIndex? = nil) -> RegionFile {
        var result = RegionFile(file: file, regions: [], issues: [])
        func refuse(_ problem: RegionConfigProblem) -> RegionFile {
            result.issues.append(RegionConfigIssue(file: file, problem: problem))
            return result
        }
        var members: [String: JSONValue] = [:]
        // The features, when the last `features` member was an array (read as it streamed by).
        var streamed: FeatureBatchReader?
        do throws(JSONSyntaxError) {
            var scanner = JSONScanner(bytes)
            guard scanner.nextKind() == .object else {
                let document = try JSONParser.parse(bytes)  // not an object: no features to stream
                let found = document["type"]?.stringValue.map { "a \($0)" } ?? "a JSON \(document.typeName)"
                return refuse(.notFeatureCollection(found: found))
            }
            try scanner.enterObject()
            while let key = try scanner.nextMember() {
                if key == "features", scanner.nextKind() == .array {
                    var reader = FeatureBatchReader(text: sources == nil ? nil : bytes)
                    var skipped = SkippedFeatures(sources: sources, bytes: bytes)
                    try scanner.enterArray()
                    while try scanner.nextItem() {
                        let start = scanner.nextValueOffset()
                        if skipped.recognizing, let range = scanner.skipContainer() {
                            skipped.ranges.append(range)
                            if skipped.isFull { try skipped.resolve(&scanner, into: &reader) }
                            continue
                        }
                        try skipped.resolve(&scanner, into: &reader)
                        scanner.seek(to: start)
                        let feature = try scanner.readValue()
                        reader.add(feature, text: start..<scanner.offset)
                    }
                    try skipped.resolve(&scanner, into: &reader)
                    reader.finish()
                    streamed = reader
                    members[key] = nil
                } else {
                    members[key] = try scanner.readValue()
                    if key == "features" { streamed = nil }
                }
            }
            try scanner.finish()
        } catch {
            return refuse(.invalidJSON(error))
        }
        let document = JSONValue.object(members)
        guard document["type"]?.stringValue == "FeatureCollection" else {
            let found = document["type"]?.stringValue.map { "a \($0)" } ?? "a JSON \(document.typeName)"
            return refuse(.notFeatureCollection(found: found))
        }
        if let crs = Self.declaredCRS(document), !Self.isWGS84(crs) {
            return refuse(.projectedCRS(crs))
        }
        if let streamed {
            result.regions = streamed.regions
            result.sources = streamed.sources
            result.recognized = streamed.recognized
            result.issues = streamed.issues.map {
                RegionConfigIssue(file: file, featureIndex: $0.index, featureID: $0.id, problem: $0.problem)
            }
            return result
        }
        guard let features = document["features"]?.arrayValue else {
            return refuse(.notFeatureCollection(found: "a FeatureCollection without a features array"))
        }
        var reader = FeatureBatchReader()
        for feature in features { reader.add(feature) }
        reader.finish()
        result.regions = reader.regions
        result.issues = reader.issues.map {
            RegionConfigIssue(file: file, featureIndex: $0.index, featureID: $0.id, problem: $0.problem)
        }
        return result
    }

    /// Features passed over by their brackets, waiting to be recognised by their text's
    /// fingerprint: a batch's fingerprints are taken and looked up across the cores (hashing a
    /// million features' 400 MB is most of a re-plan's reading), then each is added in order,
    /// recognised or read after all.
    private struct SkippedFeatures {
        let sources: RegionSourceIndex?
        let bytes: [UInt8]
        var ranges: [Range<Int>] = []
        private static let batch = 4096

        init(sources: RegionSourceIndex?, bytes: [UInt8]) {
            self.sources = sources
            self.bytes = bytes
        }

        /// Whether features are passed over to be recognised (there are stored ones to know).
        var recognizing: Bool { !(sources?.regions.isEmpty ?? true) }
        var isFull: Bool { ranges.count >= Self.batch }

        /// Adds the waiting features to `reader` in order, reading those not recognised, and
        /// leaves `scanner` where it stood (after the last of them, or past the array's end).
        mutating func resolve(_ scanner: inout JSONScanner, into reader: inout FeatureBatchReader)
            throws(JSONSyntaxError)
        {
            guard let sources, !ranges.isEmpty else { return }
            let resume = scanner.offset
            let bytes = self.bytes
            let known = ParallelMap.map(ranges, serialBelow: 512) { range in
                sources.regions[RegionSource.fingerprint(bytes[range])]
            }
            for (range, known) in zip(ranges, known) {
                if let known {
                    reader.add(recognized: known)
                } else {
                    scanner.seek(to: range.lowerBound)
                    let feature = try scanner.readValue()
                    reader.add(feature, text: range.lowerBound..<scanner.offset)
                }
            }
            scanner.seek(to: resume)
            ranges.removeAll(keepingCapacity: true)
        }
    }

    /// Reads features into regions in batches, in feature order: each full batch across the
    /// cores (a GEOS context per chunk, each confined to the thread that runs it) on another
    /// thread while the caller scans the next; the last, partial batch across the cores too
    /// from a few hundred features, else on the caller's thread.
    private struct FeatureBatchReader {
        /// The file's text, when each feature's fingerprint is to be taken.
        let text: [UInt8]?
        var regions: [(index: Int, region: Region)] = []
        var sources: [SourceFingerprint?] = []
        var recognized: [(index: Int, region: RecognizedRegion)] = []
        var issues: [(index: Int, id: String?, problem: RegionConfigProblem)] = []
        private var batch: [Item] = []
        private var count = 0
        /// The full batch being read while the next one is scanned.
        private var inFlight: BackgroundWork<[Outcome]>?
        static let batchSize = 8192

        init(text: [UInt8]? = nil) {
            self.text = text
        }

        /// A feature to read (with where its text lies), or one already recognised.
        enum Item: Sendable {
            case feature(JSONValue, text: Range<Int>?)
            case recognized(RecognizedRegion)
        }

        typealias Outcome = (
            region: Region?, id: String?, problems: [RegionConfigProblem], source: SourceFingerprint?,
            recognized: RecognizedRegion?
        )

        static func read(_ item: Item, text: [UInt8]?, _ context: GEOSContext) -> Outcome {
            switch item {
            case .recognized(let known):
                return (nil, known.id, [], nil, known)
            case .feature(let feature, let range):
                var reader = FeatureReader(feature: feature)
                let region = reader.read(context: context)
                let source = text.flatMap { text in range.map { RegionSource.fingerprint(text[$0]) } }
                return (region, reader.id, reader.problems, source, nil)
            }
        }

        mutating func add(_ feature: JSONValue, text range: Range<Int>? = nil) {
            add(.feature(feature, text: range))
        }

        mutating func add(recognized region: RecognizedRegion) {
            add(.recognized(region))
        }

        private mutating func add(_ item: Item) {
            batch.append(item)
            guard batch.count == Self.batchSize else { return }
            let items = batch
            batch = []
            batch.reserveCapacity(Self.batchSize)
            let text = self.text
            let reading = BackgroundWork {
                ParallelMap.map(items, serialBelow: 0, state: { GEOSContext() }) { Self.read($1, text: text, $0) }
            }
            collectInFlight()
            inFlight = reading
        }

        /// Every feature added, read: the last batch across the cores too once it is large
        /// enough to pay for their GEOS contexts (a file of a thousand regions, as `scan` reads,
        /// is all last batch).
        mutating func finish() {
            collectInFlight()
            let text = self.text
            take(ParallelMap.map(batch, serialBelow: 256, state: { GEOSContext() }) { Self.read($1, text: text, $0) })
            batch = []
        }

        /// Waits for the batch in flight and takes its outcomes.
        private mutating func collectInFlight() {
            guard let inFlight else { return }
            take(inFlight.wait())
            self.inFlight = nil
        }

        private mutating func take(_ outcomes: [Outcome]) {
            for outcome in outcomes {
                if let region = outcome.region {
                    regions.append((count, region))
                    if text != nil { sources.append(outcome.source) }
                }
                if let known = outcome.recognized { recognized.append((count, known)) }
                for problem in outcome.problems { issues.append((count, outcome.id, problem)) }
                count += 1
            }
        }
    }

    /// Reads one GeoJSON Feature on its own, such as the canonical feature the store keeps.
    /// `defaultID` is the id of a feature that names none (`PUT /v1/regions/{id}` names it in
    /// the path): it is written into the feature's properties, as if the feature had it.
    /// `validatingGeometry` false skips GEOS's validity check of areas, for features the store
    /// wrote (checked when they were applied).
    public func region(
        fromFeature data: Data, source: String, defaultID: String? = nil, validatingGeometry: Bool = true
    ) throws(RegionConfigError) -> Region {
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
        guard let region = reader.read(context: context, validatingGeometry: validatingGeometry) else {
            throw RegionConfigError(
                issues: reader.problems.map {
                    RegionConfigIssue(file: source, featureIndex: 0, featureID: reader.id, problem: $0)
                })
        }
        return region
    }

    /// Reads a stored region's compact form (``RegionCompactForm``): the region its canonical
    /// feature reads back as, with only the properties' text parsed.
    public func region(fromCompact bytes: [UInt8], source: String) throws(RegionConfigError) -> Region {
        guard let (geometry, text) = RegionCompactForm.decode(bytes) else {
            throw RegionConfigError(
                issues: [RegionConfigIssue(file: source, problem: .malformedFeature("not a region's compact form"))])
        }
        let properties: JSONValue
        do {
            properties = try JSONParser.parse(Array(text))
        } catch {
            throw RegionConfigError(issues: [RegionConfigIssue(file: source, problem: .invalidJSON(error))])
        }
        var reader = FeatureReader(properties: properties, storedGeometry: geometry)
        guard let region = reader.read(context: context, validatingGeometry: false) else {
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
        if files.allSatisfy(\.issues.isEmpty), let sorted = sortedIfUnique(files) { return sorted }
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

    /// The regions sorted by id when no two share one (the usual case, told without a
    /// dictionary of a million ids); nil when some do. Indices are sorted, not the regions,
    /// which are large to move.
    private static func sortedIfUnique(_ files: [RegionFile]) -> [Region]? {
        let all = files.flatMap { $0.regions.map(\.region) }
        var order = Array(all.indices)
        order.sort { all[$0].id < all[$1].id }
        for (a, b) in zip(order, order.dropFirst()) where all[a].id == all[b].id { return nil }
        return order.map { all[$0] }
    }
}
