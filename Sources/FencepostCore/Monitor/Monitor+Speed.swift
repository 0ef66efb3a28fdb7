import FencepostGeometry

extension Monitor {
    /// A fix's step in a monitor with speed limits: the places as usual, then, in each visit to
    /// a region with a limit, the fix's speed (reported, else implied by the distance from the
    /// previous fix). An episode runs from the first fix above the limit to the first at or
    /// below it, or to the visit's end; one that lasted `speed_min_duration` is an `overspeed`
    /// at its start, with its top speed and duration.
    func processWatchingSpeed(_ fix: Fix, track: inout MonitorTrack, emit: (MonitorEvent) -> Void) throws {
        let previous = track.lastFix
        var exits: [String: Double] = [:]
        let following = !track.speeding.isEmpty
        try processPlaces(fix, track: &track) { event in
            if following, event.kind == .exit { exits[event.regionID] = event.time }
            emit(event)
        }
        // Episodes of visits that ended at this fix end with them.
        for (region, episode) in track.speeding where track.members[region]?.enter.time != episode.visitEnteredAt {
            finish(episode, region: region, at: exits[ids[region]] ?? fix.time, device: fix.device, emit: emit)
            track.speeding[region] = nil
        }
        guard let speed = Self.speed(of: fix, after: previous) else { return }
        for (region, visit) in zip(track.members.regions, track.members.values) {
            guard let rule = speedLimits[region], visit.phase == .inside else { continue }
            if speed > rule.limit {
                if var episode = track.speeding[region] {
                    episode.maxSpeed = max(episode.maxSpeed, speed)
                    track.speeding[region] = episode
                } else {
                    track.speeding[region] = SpeedEpisode(
                        visitEnteredAt: visit.enter.time, start: fix.time, position: fix.position, maxSpeed: speed)
                }
            } else if let episode = track.speeding.removeValue(forKey: region) {
                finish(episode, region: region, at: fix.time, device: fix.device, emit: emit)
            }
        }
    }

    /// Whether the device is in a region with a speed limit.
    func watchesSpeed(_ track: MonitorTrack) -> Bool {
        track.members.regions.contains { speedLimits[$0] != nil }
    }

    /// An episode ends at `end`: an `overspeed` when it lasted long enough.
    private func finish(
        _ episode: SpeedEpisode, region: Int, at end: Double, device: String, emit: (MonitorEvent) -> Void
    ) {
        guard let rule = speedLimits[region], end - episode.start >= rule.minDuration else { return }
        emit(
            MonitorEvent(
                kind: .overspeed, device: device, regionID: ids[region], time: episode.start, flags: [],
                visitEnteredAt: episode.visitEnteredAt, position: episode.position,
                overspeed: OverspeedEpisode(maxSpeedKmh: episode.maxSpeed * 3.6, duration: end - episode.start)))
    }

    /// Metres per second: the fix's reported speed, else the distance from the previous fix
    /// over the time between them; nil for a first fix that reports none.
    static func speed(of fix: Fix, after previous: FixPoint?) -> Double? {
        if let speed = fix.speed, speed >= 0 { return speed }
        guard let previous, fix.time > previous.time else { return nil }
        return Geodesy.distance(previous.position, fix.position) / (fix.time - previous.time)
    }
}
