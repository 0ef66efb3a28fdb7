import FencepostGeometry

extension Monitor {
    /// A fix's step in a monitor with speed limits: the places as usual, then, in each visit to
    /// a region with a limit, the fix's speed (reported, else implied by the distance from the
    /// previous fix). An episode runs from the first fix above the limit to the first at or
    /// below it, or to the visit's end; one that lasted `speed_min_duration` is an `overspeed`
    /// at its start, with its top speed and duration.
    func processWatchingSpeed(_ fix: Fix, track: inout MonitorTrack, emit: (MonitorEvent) -> Void) throws {
        let previous = track.lastFix
        var open: [(region: Int, enteredAt: Double, speeding: Membership.Speeding)] = []
        for (region, membership) in zip(track.members.regions, track.members.values) {
            if let speeding = membership.speeding { open.append((region, membership.enter.time, speeding)) }
        }
        var exits: [String: Double] = [:]
        try processPlaces(fix, track: &track) { event in
            if event.kind == .exit, !open.isEmpty { exits[event.regionID] = event.time }
            emit(event)
        }
        // Episodes of visits that ended at this fix end with them.
        for episode in open where track.members[episode.region]?.enter.time != episode.enteredAt {
            finish(
                episode.speeding, region: episode.region, at: exits[ids[episode.region]] ?? fix.time,
                visit: episode.enteredAt, device: fix.device, emit: emit)
        }
        guard let speed = Self.speed(of: fix, after: previous) else { return }
        for region in track.members.regions {
            guard let rule = speedLimits[region], var visit = track.members[region], visit.phase == .inside else {
                continue
            }
            if speed > rule.limit {
                if var speeding = visit.speeding {
                    speeding.maxSpeed = max(speeding.maxSpeed, speed)
                    visit.speeding = speeding
                } else {
                    visit.speeding = Membership.Speeding(start: fix.time, position: fix.position, maxSpeed: speed)
                }
            } else if let speeding = visit.speeding {
                finish(speeding, region: region, at: fix.time, visit: visit.enter.time, device: fix.device, emit: emit)
                visit.speeding = nil
            }
            track.members[region] = visit
        }
    }

    /// Whether the device is in a region with a speed limit.
    func watchesSpeed(_ track: MonitorTrack) -> Bool {
        track.members.regions.contains { speedLimits[$0] != nil }
    }

    /// An episode ends at `end`: an `overspeed` when it lasted long enough.
    private func finish(
        _ speeding: Membership.Speeding, region: Int, at end: Double, visit enteredAt: Double, device: String,
        emit: (MonitorEvent) -> Void
    ) {
        guard let rule = speedLimits[region], end - speeding.start >= rule.minDuration else { return }
        emit(
            MonitorEvent(
                kind: .overspeed, device: device, regionID: ids[region], time: speeding.start, flags: [],
                visitEnteredAt: enteredAt, position: speeding.position,
                overspeed: OverspeedEpisode(maxSpeedKmh: speeding.maxSpeed * 3.6, duration: end - speeding.start)))
    }

    /// Metres per second: the fix's reported speed, else the distance from the previous fix
    /// over the time between them; nil for a first fix that reports none.
    static func speed(of fix: Fix, after previous: FixPoint?) -> Double? {
        if let speed = fix.speed, speed >= 0 { return speed }
        guard let previous, fix.time > previous.time else { return nil }
        return Geodesy.distance(previous.position, fix.position) / (fix.time - previous.time)
    }
}
