extension MonitoredSetPlanner {
    /// How far ahead a scheduled region counts: one whose next period starts within it is
    /// planned now, so the phone is watching when it starts (a phone asks again on each re-plan
    /// exit, not at a schedule's start).
    public static let scheduleHorizon = 12 * 3_600.0

    /// The regions a phone should consider for `device` at `time`: enabled, applying to the
    /// device by the roster, and with a schedule active now or starting within
    /// ``scheduleHorizon``.
    /// `circle` gives each region's circle (callers that plan often keep them).
    public static func candidates(
        _ regions: [Region], device: String, roster: DeviceRoster, at time: Double,
        circle: (Region) -> OSCircle = { OSCircle($0.shape) }
    ) -> [Candidate] {
        let groups = roster.groups(of: device)
        return regions.compactMap { region in
            guard isCandidate(region, device: device, groups: groups, at: time) else { return nil }
            return Candidate(id: region.id, name: region.name, circle: circle(region))
        }
    }

    /// A device's candidates as positions in a list of every region's candidate, made once
    /// (``candidates(_:prepared:device:roster:at:)``): a plan copies only those it chooses.
    public struct Selection: Sendable {
        /// Every region's candidate.
        public let all: [Candidate]
        /// The device's, as positions in ``all``.
        public let indices: [Int]

        public init(all: [Candidate], indices: [Int]) {
            self.all = all
            self.indices = indices
        }

        /// Every candidate in `all`.
        public init(_ all: [Candidate]) {
            self.init(all: all, indices: Array(all.indices))
        }

        public var candidates: [Candidate] { indices.map { all[$0] } }
    }

    /// ``candidates(_:device:roster:at:circle:)`` with every region's candidate made beforehand
    /// (`prepared[i]` is `regions[i]`'s), as a service keeps them between plans: a plan made
    /// per request then makes no candidate, looks up no circle and copies no region.
    public static func candidates(
        _ regions: [Region], prepared: [Candidate], device: String, roster: DeviceRoster, at time: Double
    ) -> Selection {
        precondition(regions.count == prepared.count, "one prepared candidate per region")
        let groups = roster.groups(of: device)
        var indices: [Int] = []
        for index in regions.indices where isCandidate(regions[index], device: device, groups: groups, at: time) {
            indices.append(index)
        }
        return Selection(all: prepared, indices: indices)
    }

    /// Whether `region` is one of `device`'s candidates at `time`: enabled, applying to it (a
    /// member of `groups`, its groups in the roster, looked up once per plan), and active or
    /// starting within the schedule horizon.
    private static func isCandidate(_ region: Region, device: String, groups: Set<String>, at time: Double) -> Bool {
        guard region.settings.enabled, region.audience.includes(device: device, groups: groups) else { return false }
        guard let schedule = region.settings.schedule else { return true }
        guard let clock = ScheduleClock(schedule) else { return false }
        return clock.isActive(at: time)
            || clock.boundaries(after: time, through: time + scheduleHorizon).contains(where: \.starts)
    }

    /// The slots an OS gives one app: iOS monitors 20 regions, Android 100.
    public static func budget(platform: String) -> Int? {
        switch platform.lowercased() {
        case "ios": return 20
        case "android": return 100
        default: return nil
        }
    }
}
