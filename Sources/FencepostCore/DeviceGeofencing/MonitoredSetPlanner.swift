public import FencepostGeometry

/// What a phone that geofences on its own should monitor now, within its OS's budget: the
/// regions nearest to it as circles, and one re-plan circle around it whose exit tells the
/// phone to ask again. No region left out reaches into the re-plan circle, so the phone cannot
/// reach a region it does not monitor without first leaving the re-plan circle.
public struct MonitoredSetPlan: Sendable, Hashable {
    public struct Monitored: Sendable, Hashable {
        /// The region's id: what the phone's OS monitors it under.
        public var id: String
        public var name: String?
        public var circle: OSCircle
        /// Metres from the device to the circle's edge when planned (negative inside).
        public var distance: Double
    }

    /// The regions to monitor, nearest first.
    public var regions: [Monitored]
    /// Nil when every candidate is monitored: nothing lies beyond the set to re-plan for.
    public var replan: ReplanCircle?
    /// The diff from what the phone monitors now (`have`), ids sorted: what to start monitoring,
    /// stop, and leave as it is. The re-plan circle is in them under its id.
    public var add: [String]
    public var remove: [String]
    public var keep: [String]
    /// Regions that apply to the device and were considered.
    public var candidates: Int
}

/// The re-plan circle. Its id carries its centre and radius (`replan@LAT_LON_RADIUS`: no comma, so it fits a `have=ID,ID` list; no region id has an `@`), so a
/// phone that reports it among what it monitors gets it kept while it is still valid.
public struct ReplanCircle: Sendable, Hashable {
    public var center: Position
    public var radius: Double

    public init(center: Position, radius: Double) {
        self.center = center
        self.radius = radius
    }

    public var id: String {
        "replan@\(Self.degrees(center.lat))_\(Self.degrees(center.lon))_\(Int(radius.isNaN ? 0 : min(max(radius, 0), Self.largestRadius)))"
    }

    /// The re-plan circle an id names; nil for any other id.
    public init?(id: String) {
        guard id.hasPrefix("replan@") else { return nil }
        let parts = id.dropFirst(7).split(separator: "_")
        guard parts.count == 3, let lat = Double(parts[0]), let lon = Double(parts[1]), let radius = Double(parts[2]),
            abs(lat) <= 90, abs(lon) <= 180, (0...ReplanCircle.largestRadius).contains(radius)
        else { return nil }
        self.init(center: Position(lon: lon, lat: lat), radius: radius)
    }

    /// Half the Earth's circumference: no circle on it is wider, and an id's radius past it
    /// is no re-plan circle (nor a number the id could write).
    static let largestRadius = 20_100_000.0

    /// Degrees to 5 decimals (a metre or so), as the id writes them; a latitude or longitude,
    /// so within ±180 (clamped, 0 for what is not a number).
    private static func degrees(_ value: Double) -> String {
        let scaled = (min(max(value.isNaN ? 0 : value, -180), 180) * 100_000).rounded()
        let sign = scaled < 0 ? "-" : ""
        let whole = Int(abs(scaled))
        let fraction = String(whole % 100_000)
        return "\(sign)\(whole / 100_000).\(String(repeating: "0", count: 5 - fraction.count))\(fraction)"
    }
}

/// Plans a device's monitored set (``MonitoredSetPlan``) from the regions that apply to it.
///
/// The policy: regions the device is inside come first (the phone must see it leave them),
/// then the rest by distance from the device to their circle's edge — the order in which a
/// device moving any way could reach them. A region the phone already monitors counts as
/// `stickiness` metres nearer than it is, so small moves do not swap regions in and out. One
/// slot of the budget is the re-plan circle, centred on the device, reaching to the nearest
/// edge of a region left out (at most `maximumReplanRadius`), less a `margin` for the way the
/// device goes on while its OS takes to report the exit and the phone to ask again (its speed
/// times that delay; the circle keeps at least half its reach). A re-plan circle the phone
/// already monitors is kept while the device is inside it and no region left out reaches
/// into it.
public struct MonitoredSetPlanner: Sendable {
    public struct Candidate: Sendable, Hashable {
        public var id: String
        public var name: String?
        public var circle: OSCircle

        public init(id: String, name: String? = nil, circle: OSCircle) {
            self.id = id
            self.name = name
            self.circle = circle
        }

        public init(_ region: Region) {
            self.init(id: region.id, name: region.name, circle: OSCircle(region.shape))
        }
    }

    public var stickiness: Double
    public var maximumReplanRadius: Double

    public init(stickiness: Double = 200, maximumReplanRadius: Double = 50_000) {
        self.stickiness = stickiness
        self.maximumReplanRadius = maximumReplanRadius
    }

    /// The plan for a device at `position` with `budget` slots (at least 2: a region and the
    /// re-plan circle) that monitors `have` now; `margin` metres come off the re-plan circle.
    public func plan(
        _ candidates: [Candidate], at position: Position, budget: Int, have: [String] = [], margin: Double = 0
    ) -> MonitoredSetPlan {
        plan(Selection(candidates), at: position, budget: budget, have: have, margin: margin)
    }

    /// ``plan(_:at:budget:have:margin:)`` of a selection of candidates.
    public func plan(
        _ selection: Selection, at position: Position, budget: Int, have: [String] = [], margin: Double = 0
    ) -> MonitoredSetPlan {
        let candidates = selection.all
        let held = Set(have)
        // Inside: always first. Held: nearer by the stickiness. Ranked by index: a candidate
        // is copied only once chosen (a device among a thousand regions chooses twenty).
        var ranked: [Ranked] = []
        ranked.reserveCapacity(selection.indices.count)
        for index in selection.indices {
            let distance = candidates[index].circle.distanceToEdge(from: position)
            let rank =
                distance <= 0
                ? distance - 1e12 : distance - (held.isEmpty || !held.contains(candidates[index].id) ? 0 : stickiness)
            ranked.append(Ranked(index: index, distance: distance, rank: rank))
        }
        let slots = max(budget, 2)
        let everything = ranked.count <= slots
        let (chosen, left) = everything ? (ranked, []) : Self.best(slots - 1, of: ranked, in: candidates)

        var replan: ReplanCircle?
        if !left.isEmpty {
            let kept = have.lazy.compactMap(ReplanCircle.init(id:)).first { circle in
                Geodesy.distance(position, circle.center) < circle.radius
                    && left.allSatisfy {
                        candidates[$0.index].circle.distanceToEdge(from: circle.center) >= circle.radius
                    }
            }
            let reach = left.lazy.map { max($0.distance, 0) }.min() ?? maximumReplanRadius
            let radius = min(max(reach - max(margin, 0), reach / 2), maximumReplanRadius)
            replan = kept ?? ReplanCircle(center: position, radius: radius.rounded(.down))
        }
        let regions = chosen.map {
            MonitoredSetPlan.Monitored(
                id: candidates[$0.index].id, name: candidates[$0.index].name, circle: candidates[$0.index].circle,
                distance: $0.distance)
        }
        .sorted { ($0.distance, $0.id) < ($1.distance, $1.id) }
        let planned = Set(regions.map(\.id) + (replan.map { [$0.id] } ?? []))
        return MonitoredSetPlan(
            regions: regions, replan: replan,
            add: planned.subtracting(held).sorted(), remove: held.subtracting(planned).sorted(),
            keep: planned.intersection(held).sorted(), candidates: selection.indices.count)
    }

    /// A candidate (its index) with its distance to the edge and its rank (lower is better).
    private struct Ranked {
        let index: Int
        let distance: Double
        let rank: Double

        func precedes(_ other: Ranked, in candidates: [Candidate]) -> Bool {
            rank != other.rank ? rank < other.rank : candidates[index].id < candidates[other.index].id
        }
    }

    /// The `count` best of `ranked` (by rank, then id) and the others, in no order: a device
    /// among thousands of regions asks for a few dozen, so they are kept in order as the
    /// candidates pass (most fail against the worst kept) instead of sorting all of them.
    private static func best(_ count: Int, of ranked: [Ranked], in candidates: [Candidate]) -> (
        best: [Ranked], others: [Ranked]
    ) {
        var best: [Ranked] = []
        best.reserveCapacity(count + 1)
        var others: [Ranked] = []
        others.reserveCapacity(max(ranked.count - count, 0))
        for item in ranked {
            if best.count == count, let worst = best.last {
                guard item.precedes(worst, in: candidates) else {
                    others.append(item)
                    continue
                }
                others.append(best.removeLast())
            }
            let index = best.firstIndex { item.precedes($0, in: candidates) } ?? best.count
            best.insert(item, at: index)
        }
        return (best, others)
    }
}
