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
        regions.compactMap { region in
            guard isCandidate(region, device: device, roster: roster, at: time) else { return nil }
            return Candidate(id: region.id, name: region.name, circle: circle(region))
        }
    }

    /// ``candidates(_:device:roster:at:circle:)`` with every region's candidate made beforehand
    /// (`prepared[i]` is `regions[i]`'s), as a service keeps them between plans: a plan made
    /// per request then makes no candidate and looks up no circle.
    public static func candidates(
        _ regions: [Region], prepared: [Candidate], device: String, roster: DeviceRoster, at time: Double
    ) -> [Candidate] {
        precondition(regions.count == prepared.count, "one prepared candidate per region")
        var candidates: [Candidate] = []
        for index in regions.indices where isCandidate(regions[index], device: device, roster: roster, at: time) {
            candidates.append(prepared[index])
        }
        return candidates
    }

    /// Whether `region` is one of `device`'s candidates at `time`: enabled, applying to it, and
    /// active or starting within the schedule horizon.
    private static func isCandidate(_ region: Region, device: String, roster: DeviceRoster, at time: Double) -> Bool {
        guard region.settings.enabled, roster.applies(region, to: device) else { return false }
        if let schedule = region.settings.schedule {
            guard let clock = ScheduleClock(schedule) else { return false }
            let soon = clock.boundaries(after: time, through: time + scheduleHorizon).contains(where: \.starts)
            guard clock.isActive(at: time) || soon else { return false }
        }
        return true
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
