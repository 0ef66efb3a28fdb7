/// Layers: regions that partition space (communes, districts, delivery zones, time zones). A
/// device is in at most one region of a layer at a time. Each region alone would keep its own
/// hysteresis band, so walking along a shared border held both visits open at once (one
/// entered early, the other left late). In a layer, the region the device is in holds it until
/// it leaves that region as a visit is left (beyond the band, for the exit delay); the region
/// it is in then opens at that same crossing, so one visit ends where the next begins.
extension Monitor {
    /// At a fix inside `region` (with no visit in it): whether another region of its layer
    /// holds the device. If so, the region waits (no enter, no settled disc: it is looked at
    /// again at every fix until the holder lets go). If the holder let go earlier at this fix,
    /// the region opens at once at the holder's exit crossing, and true is returned as well.
    func layerHeld(
        _ layer: Int, by region: Int, slot: Int?, fix: Fix, track: inout MonitorTrack, emit: (MonitorEvent) -> Void
    ) throws -> Bool {
        if let released = track.layerReleases[layer] {
            guard !holds(layer, other: region, track) else {
                waitInLayer(region, slot: slot, track: &track)
                return true
            }
            open(region, at: released, fix: fix, track: &track, emit: emit)
            if let slot { track.discs[slot] = nil }
            return true
        }
        guard holds(layer, other: region, track) else { return false }
        waitInLayer(region, slot: slot, track: &track)
        return true
    }

    /// After a fix's steps: a region that waited at this fix for its layer's holder, which let
    /// go later in the same fix, opens at the holder's exit crossing. The scratch is cleared.
    func switchLayers(fix: Fix, track: inout MonitorTrack, emit: (MonitorEvent) -> Void) throws {
        defer {
            track.layerReleases.removeAll(keepingCapacity: true)
            track.layerWaiting.removeAll(keepingCapacity: true)
        }
        for region in track.layerWaiting {
            guard let layer = layers[region], let released = track.layerReleases[layer], track.members[region] == nil,
                !holds(layer, other: region, track)
            else { continue }
            open(region, at: released, fix: fix, track: &track, emit: emit)
        }
    }

    /// Whether a region of `layer` other than `region` has the device (in it, or entering it).
    func holds(_ layer: Int, other region: Int, _ track: MonitorTrack) -> Bool {
        track.members.regions.contains { $0 != region && layers[$0] == layer }
    }

    private func waitInLayer(_ region: Int, slot: Int?, track: inout MonitorTrack) {
        track.layerWaiting.append(region)
        if let slot { track.discs[slot] = nil }
    }

    /// The visit of `region` opens at `crossing` (where the device left its layer's previous
    /// region), confirmed: the switch already held beyond the band for the exit delay.
    private func open(
        _ region: Int, at crossing: Crossing, fix: Fix, track: inout MonitorTrack, emit: (MonitorEvent) -> Void
    ) {
        let enter = crossing
        var visit = Membership(phase: .inside, enter: enter, outward: nil, armed: false, dwellEmitted: false)
        emit(
            MonitorEvent(
                kind: .enter, device: fix.device, regionID: ids[region], time: enter.time, flags: enter.flags,
                visitEnteredAt: enter.time, position: enter.position))
        emitTimedEventsIfDue(&visit, certainUntil: fix.time, settings: regionSettings[region]) {
            kind, crossing, visit in
            emit(
                MonitorEvent(
                    kind: kind, device: fix.device, regionID: ids[region], time: crossing.time, flags: crossing.flags,
                    visitEnteredAt: visit, position: crossing.position))
        }
        track.members[region] = visit
    }
}
