/// What the store knows of a monitored region: enough to diff without re-reading geometry.
public struct MonitoredRegionDigest: Sendable, Hashable {
    public var id: String
    public var contentHash: String
    public var geometryHash: String
    public var enabled: Bool
    /// The fingerprint of the feature text it was last applied from (``RegionSource``), if any.
    public var sourceHash: String?

    public init(id: String, contentHash: String, geometryHash: String, enabled: Bool = true, sourceHash: String? = nil)
    {
        self.id = id
        self.contentHash = contentHash
        self.geometryHash = geometryHash
        self.enabled = enabled
        self.sourceHash = sourceHash
    }
}

/// One difference between the desired and the monitored region sets.
public enum RegionChange: Sendable, Hashable {
    case add(Region)
    /// `geometryChanged` is true when the area moved, which closes the region's open visits;
    /// `disabled` when the region stops being monitored (`enabled` turned false), which does too.
    case update(Region, geometryChanged: Bool, disabled: Bool = false)
    case remove(id: String)

    public var regionID: String {
        switch self {
        case .add(let region), .update(let region, _, _): return region.id
        case .remove(let id): return id
        }
    }

    /// The plan line users read: `+ add ID`, `~ update ID`, `- remove ID`.
    public var line: String {
        switch self {
        case .add(let region): return "+ add \(region.id)"
        case .update(let region, _, _): return "~ update \(region.id)"
        case .remove(let id): return "- remove \(id)"
        }
    }
}

/// Why a region's open visits are closed by a reconcile.
public enum RegionRetirementReason: String, Sendable, Hashable {
    case regionRemoved = "region_removed"
    case regionChanged = "region_changed"
}

/// The reconciler's diff: desired regions against monitored ones, by id and content hash.
public struct RegionPlan: Sendable, Hashable {
    /// Changes in id order.
    public var changes: [RegionChange]
    /// Ids present and identical on both sides.
    public var unchanged: [String]
    /// Per updated region, the names of what changed (`geometry`, and each property added,
    /// removed or changed), in order; empty until ``noteChangedFields(stored:)``.
    public var changedFields: [String: [String]] = [:]

    public init(desired: [Region], monitored: [MonitoredRegionDigest]) {
        let (matches, removed) = Self.match(desired, monitored)
        var changes: [RegionChange] = []
        var unchanged: [String] = []
        // Hashing is most of a plan's work when the set is large: spread over the cores.
        let hashes: [String?] = ParallelMap.map(Array(desired.indices)) { index in
            matches[index] == nil ? nil : desired[index].contentHash
        }
        for (index, region) in desired.enumerated() {
            guard let match = matches[index], let hash = hashes[index] else {
                changes.append(.add(region))
                continue
            }
            let current = monitored[match]
            if current.contentHash == hash {
                unchanged.append(region.id)
            } else {
                changes.append(
                    .update(
                        region, geometryChanged: current.geometryHash != region.geometryHash,
                        disabled: current.enabled && !region.settings.enabled))
            }
        }
        for index in removed {
            changes.append(.remove(id: monitored[index].id))
        }
        // Desired sets usually come sorted by id (a config's merge sorts them): then only the
        // removes, which follow, can be out of order.
        self.changes =
            Self.isStrictlySorted(changes.lazy.map(\.regionID)) ? changes : changes.sorted { $0.regionID < $1.regionID }
        self.unchanged = Self.isStrictlySorted(unchanged) ? unchanged : unchanged.sorted()
    }

    /// The plan of a desired set part of which was recognised by its source text: those
    /// regions are unchanged, and only the rest are compared. Nil when a recognised region no
    /// longer has that source in the monitored set (it changed since it was recognised).
    public init?(desired: DesiredRegions, monitored: [MonitoredRegionDigest]) {
        guard !desired.recognized.isEmpty else {
            self.init(desired: desired.regions, monitored: monitored)
            return
        }
        let recognized = desired.recognized
        var rest: [MonitoredRegionDigest] = []
        rest.reserveCapacity(max(0, monitored.count - recognized.count))
        if Self.isStrictlySorted(monitored.lazy.map(\.id)) {
            // Both in id order: walk them together.
            var next = 0
            for digest in monitored {
                // A recognised id the store no longer has.
                if next < recognized.count, recognized[next].id < digest.id { return nil }
                guard next < recognized.count, recognized[next].id == digest.id else {
                    rest.append(digest)
                    continue
                }
                guard digest.sourceHash.flatMap(SourceFingerprint.init(hex:)) == recognized[next].fingerprint else {
                    return nil
                }
                next += 1
            }
            guard next == recognized.count else { return nil }
        } else {
            var sources: [String: SourceFingerprint] = [:]
            sources.reserveCapacity(recognized.count)
            for region in recognized { sources[region.id] = region.fingerprint }
            var found = 0
            for digest in monitored {
                guard let source = sources[digest.id] else {
                    rest.append(digest)
                    continue
                }
                guard digest.sourceHash.flatMap(SourceFingerprint.init(hex:)) == source else { return nil }
                found += 1
            }
            guard found == sources.count else { return nil }
        }
        self.init(desired: desired.regions, monitored: rest)
        // Both in id order: merge them.
        var merged: [String] = []
        merged.reserveCapacity(unchanged.count + desired.recognized.count)
        var next = 0
        for id in unchanged {
            while next < desired.recognized.count, desired.recognized[next].id < id {
                merged.append(desired.recognized[next].id)
                next += 1
            }
            merged.append(id)
        }
        merged.append(contentsOf: desired.recognized[next...].lazy.map(\.id))
        unchanged = merged
    }

    /// Per desired region, the index of the monitored digest with its id (the first, should
    /// there be two); and the indices of the digests no desired region has, in order. Both
    /// sides sorted by id with no id twice (a merged config, the store's digests) are walked
    /// together; anything else goes through a dictionary.
    private static func match(_ desired: [Region], _ monitored: [MonitoredRegionDigest]) -> (
        matches: [Int?], removed: [Int]
    ) {
        var matches: [Int?] = []
        matches.reserveCapacity(desired.count)
        var removed: [Int] = []
        if isStrictlySorted(desired.lazy.map(\.id)), isStrictlySorted(monitored.lazy.map(\.id)) {
            var next = 0
            for region in desired {
                while next < monitored.count, monitored[next].id < region.id {
                    removed.append(next)
                    next += 1
                }
                if next < monitored.count, monitored[next].id == region.id {
                    matches.append(next)
                    next += 1
                } else {
                    matches.append(nil)
                }
            }
            removed.append(contentsOf: next..<monitored.count)
            return (matches, removed)
        }
        let monitoredIndex = Dictionary(
            monitored.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        let desiredIDs = Set(desired.map(\.id))
        matches = desired.map { monitoredIndex[$0.id] }
        removed = monitored.indices.filter { !desiredIDs.contains(monitored[$0].id) }
        return (matches, removed)
    }

    private static func isStrictlySorted(_ ids: some Collection<String>) -> Bool {
        zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }
    }

    public var isEmpty: Bool { changes.isEmpty }

    /// Works out ``changedFields`` from the stored features of the updated regions (by id).
    public mutating func noteChangedFields(stored: [String: JSONValue]) {
        for case .update(let region, _, _) in changes {
            guard let before = stored[region.id] else { continue }
            let after = region.feature
            var fields: [String] = []
            if before["geometry"] != after["geometry"] { fields.append("geometry") }
            let old = before["properties"]?.objectValue ?? [:]
            let new = after["properties"]?.objectValue ?? [:]
            for key in Set(old.keys).union(new.keys).sorted() where old[key] != new[key] { fields.append(key) }
            changedFields[region.id] = fields
        }
    }

    /// The plan line users read: `+ add ID`, `~ update ID: fields`, `- remove ID`.
    public func line(_ change: RegionChange) -> String {
        guard case .update = change, let fields = changedFields[change.regionID], !fields.isEmpty else {
            return change.line
        }
        return change.line + ": " + fields.joined(separator: ", ")
    }

    /// Every change's line, in order.
    public var lines: [String] { changes.map(line) }

    public var addCount: Int { changes.count { if case .add = $0 { true } else { false } } }
    public var updateCount: Int { changes.count { if case .update = $0 { true } else { false } } }
    public var removeCount: Int { changes.count { if case .remove = $0 { true } else { false } } }

    /// Regions whose open visits this plan closes, and why. A region that is disabled leaves
    /// the monitored set as a removed one does.
    public var retirements: [(regionID: String, reason: RegionRetirementReason)] {
        changes.compactMap { change in
            switch change {
            case .remove(let id): return (id, .regionRemoved)
            case .update(let region, _, true): return (region.id, .regionRemoved)
            case .update(let region, true, false): return (region.id, .regionChanged)
            default: return nil
            }
        }
    }

    /// `N to add, N to update, N to remove, N unchanged`
    public var summary: String {
        "\(addCount) to add, \(updateCount) to update, \(removeCount) to remove, \(unchanged.count) unchanged"
    }
}
