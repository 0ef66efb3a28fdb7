import FencepostGeometry

/// The spatial indexes a monitor looks candidate regions up in, one per audience: the regions
/// for every device, and those for each device id, pattern and group a region names. A device
/// is looked up in its own (everyone's, its id's, its groups', the patterns it matches), so its
/// work per fix depends on the regions that apply to it, not on how many there are in all.
struct AudienceLookups {
    /// One index and, per item, the region it stands for (nil: the item is the region).
    private var lookups: [(index: SpatialIndex, regions: [Int]?)] = []
    private var everyone: Int?
    private var byDevice: [String: Int] = [:]
    private var byGroup: [String: Int] = [:]
    private var byPattern: [(pattern: String, lookup: Int)] = []
    /// Whether any region names devices or groups.
    let hasSelectors: Bool

    init(audiences: [RegionAudience], envelopes: [Envelope]) {
        hasSelectors = audiences.contains { !$0.isEveryone }
        guard hasSelectors else {
            // Every region for every device: one index, its items the regions themselves.
            lookups = [(SpatialIndex(envelopes: envelopes), nil)]
            everyone = 0
            return
        }
        var everyoneRegions: [Int] = []
        var deviceRegions: [String: [Int]] = [:]
        var groupRegions: [String: [Int]] = [:]
        var patternRegions: [String: [Int]] = [:]
        for (region, audience) in audiences.enumerated() {
            if audience.isEveryone { everyoneRegions.append(region) }
            for selector in Set(audience.devices) {
                if RegionAudience.isPattern(selector) {
                    patternRegions[selector, default: []].append(region)
                } else {
                    deviceRegions[selector, default: []].append(region)
                }
            }
            for group in Set(audience.groups) { groupRegions[group, default: []].append(region) }
        }
        func add(_ regions: [Int]) -> Int {
            lookups.append((SpatialIndex(envelopes: regions.map { envelopes[$0] }), regions))
            return lookups.count - 1
        }
        if !everyoneRegions.isEmpty { everyone = add(everyoneRegions) }
        byDevice = deviceRegions.mapValues(add)
        byGroup = groupRegions.mapValues(add)
        byPattern = patternRegions.sorted { $0.key < $1.key }.map { ($0.key, add($0.value)) }
    }

    /// The lookups of the regions that apply to `device`, a member of `groups`.
    func lookups(for device: String, groups: Set<String>) -> [Int] {
        var found: [Int] = []
        if let everyone { found.append(everyone) }
        guard hasSelectors else { return found }
        if let own = byDevice[device] { found.append(own) }
        for group in groups.sorted() { if let lookup = byGroup[group] { found.append(lookup) } }
        for (pattern, lookup) in byPattern where RegionAudience.matches(device, pattern) { found.append(lookup) }
        return found
    }

    /// The regions among `lookups` whose envelopes meet `box`, ascending and without repeats,
    /// into `hits` (its memory reused).
    func query(_ box: Envelope, _ chosen: [Int], into hits: inout [Int]) {
        if chosen.count == 1, lookups[chosen[0]].regions == nil {
            lookups[chosen[0]].index.query(box, into: &hits)
            return
        }
        hits.removeAll(keepingCapacity: true)
        var found: [Int] = []
        for lookup in chosen {
            let (index, regions) = lookups[lookup]
            index.query(box, into: &found)
            if let regions {
                hits.append(contentsOf: found.lazy.map { regions[$0] })
            } else {
                hits.append(contentsOf: found)
            }
        }
        guard chosen.count > 1 else { return }
        hits.sort()
        var last = -1
        hits.removeAll { region in
            defer { last = region }
            return region == last
        }
    }
}
