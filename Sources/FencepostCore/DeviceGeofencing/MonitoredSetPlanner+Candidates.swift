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
            guard region.settings.enabled, roster.applies(region, to: device) else { return nil }
            if let schedule = region.settings.schedule {
                guard let clock = ScheduleClock(schedule) else { return nil }
                let soon = clock.boundaries(after: time, through: time + scheduleHorizon).contains(where: \.starts)
                guard clock.isActive(at: time) || soon else { return nil }
            }
            return Candidate(id: region.id, name: region.name, circle: circle(region))
        }
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
