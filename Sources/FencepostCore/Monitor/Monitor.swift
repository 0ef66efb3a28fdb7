public import FencepostGeometry

/// Turns a device's fixes into enter, exit, dwell and overstay events for the monitored regions,
/// and the events of their rules: schedules (``Monitor/stepOnSchedule``), `absent` and
/// `overspeed` (``Monitor/processWatchingSpeed``).
///
/// The semantics are the design's ("Monitor semantics"): hysteresis band, enter and exit
/// delays, interpolated crossing times with back-dated exits, gaps, pass-through and dwell.
/// For speed it looks only at regions near the fix (a packed R-tree over band-widened envelopes,
/// reused while the device stays in the same box) and skips the exact test for a region
/// while the device stays within a disc that cannot reach the region's boundary.
///
/// Holds GEOS state: one monitor per thread. State lives in the caller's ``MonitorTrack`` (made
/// from, and saved as, a ``MonitorState``), so the same monitor serves any number of devices.
public final class Monitor {
    /// Per region, by index (the regions in the order given, disabled ones left out).
    let ids: [String]
    let regionSettings: [MonitorSettings]
    let areas: [RegionArea]
    /// Per region, its schedule's clock; nil for a region that is always active.
    let clocks: [ScheduleClock?]
    /// Whether any region has a schedule: only then are clocks looked at.
    let hasSchedules: Bool
    /// Per region, whether it expects the device inside (`absent` events).
    let expectsInside: [Bool]
    /// The regions with a schedule that expect the device inside: a period's start is an
    /// `absent` wherever the device is.
    let expecting: [Int]
    /// Per region, its speed limit in metres per second, and how long an episode above it must
    /// last (seconds); nil: none.
    let speedLimits: [(limit: Double, minDuration: Double)?]
    /// Whether any region has a speed limit: only then are fixes' speeds followed.
    let hasSpeedLimits: Bool
    /// Per region, its layer (an index into the layers' names); nil for a region standing
    /// alone. In a layer a device is in at most one region at a time (Monitor+Layers).
    let layers: [Int?]
    /// Whether any region has a layer: only then are layers looked at.
    let hasLayers: Bool
    /// The regions marked `privacy`: no fix inside them is kept in the history.
    private let privateRegions: [Int]
    /// Per region, its ``RegionArea/deepestUsefulDepth``.
    private let deepestDepths: [Double]
    private let indexByID: [String: Int]
    /// Per region, whom it applies to.
    private let audiences: [RegionAudience]
    /// The regions a device is monitored against, by audience (``AudienceLookups``).
    private let lookups: AudienceLookups
    private let roster: DeviceRoster
    public let settings: MonitorSettings
    /// Whether the safe and quiet discs (and, for the segment from the previous fix, the fix's
    /// distance to the boundary) may stand in for exact tests. Only tests turn it off: every
    /// candidate is then tested exactly at every fix, the reference the discs must not change.
    var usesDiscs = true

    /// How far around the fixes a candidate lookup reaches, in metres.
    static let lookupMargin = 250.0
    /// Fixes without a reported accuracy are taken to be this good (metres).
    static let assumedAccuracy = 15.0

    /// Compiles the enabled regions; disabled ones are not monitored. A region applies to the
    /// devices its audience selects, with their groups from `roster`.
    public init(
        regions: [Region], roster: DeviceRoster = DeviceRoster(), settings: MonitorSettings,
        context: GEOSContext = GEOSContext()
    ) throws {
        self.settings = settings
        // When every region is enabled (the usual case) the caller's array is shared, not copied:
        // a million regions' copy was 0.25 GiB more at a service's start-up.
        let enabled = regions.allSatisfy(\.settings.enabled) ? regions : regions.filter(\.settings.enabled)
        self.ids = enabled.map(\.id)
        self.regionSettings = enabled.map { settings.resolved(for: $0) }
        self.areas = try Self.compile(enabled.map(\.shape), context: context)
        self.clocks = try enabled.map { region in
            try region.settings.schedule.map { schedule in
                guard let clock = ScheduleClock(schedule) else {
                    throw UnknownTimeZone(region: region.id, schedule: schedule)
                }
                return clock
            }
        }
        self.hasSchedules = enabled.contains { $0.settings.schedule != nil }
        let expectsInside = enabled.map(\.settings.expectsInside)
        self.expectsInside = expectsInside
        self.expecting = enabled.indices.filter { expectsInside[$0] && enabled[$0].settings.schedule != nil }
        let speedLimits = enabled.map { region in
            region.settings.speedLimit.map { (limit: $0 / 3.6, minDuration: region.settings.speedMinDuration ?? 10) }
        }
        self.speedLimits = speedLimits
        self.hasSpeedLimits = speedLimits.contains { $0 != nil }
        let layerNames = Array(Set(enabled.compactMap(\.settings.layer))).sorted()
        self.layers = enabled.map { region in region.settings.layer.flatMap { layerNames.firstIndex(of: $0) } }
        self.hasLayers = !layerNames.isEmpty
        self.privateRegions = enabled.indices.filter { enabled[$0].settings.privacy }
        self.deepestDepths = areas.map(\.deepestUsefulDepth)
        self.indexByID = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
        self.audiences = enabled.map(\.audience)
        self.roster = roster
        self.lookups = AudienceLookups(
            audiences: audiences,
            envelopes: zip(areas, regionSettings).map { Self.widen($0.envelope, metres: $1.widestBand + 1) })
    }

    public var regionCount: Int { ids.count }

    /// The regions' areas: a large set (a million stored regions, at a service's start-up)
    /// compiled across the cores, each chunk with a GEOS context of its own, which the areas
    /// made with it keep; a small one with `context`.
    private static func compile(_ shapes: [RegionShape], context: GEOSContext) throws -> [RegionArea] {
        guard shapes.count >= 4096 else { return try shapes.map { try RegionArea.compile($0, context: context) } }
        let compiled = ParallelMap.map(shapes, serialBelow: 0, state: { GEOSContext() }) { context, shape in
            CompiledArea(result: Result { try RegionArea.compile(shape, context: context) })
        }
        return try compiled.map { try $0.result.get() }
    }

    /// An area compiled on a chunk's thread: `@unchecked Sendable` because neither it nor its
    /// GEOS context is touched there again once made; the monitor takes it after every chunk
    /// has finished and uses it, as all its areas, from one thread at a time.
    private struct CompiledArea: @unchecked Sendable {
        let result: Result<RegionArea, any Error>
    }

    /// Whether any monitored region is marked `privacy`.
    public var hasPrivateRegions: Bool { !privateRegions.isEmpty }

    /// Whether `position` lies in a monitored region marked `privacy` (boundary included),
    /// whichever devices the region selects: a private place stays private for every device.
    public func isPrivate(_ position: Position) throws -> Bool {
        for region in privateRegions where areas[region].envelope.contains(x: position.lon, y: position.lat) {
            if try areas[region].locate(position).inside { return true }
        }
        return false
    }

    /// A device's saved state, ready for this monitor's regions: those that apply to `device`
    /// (a membership in one that does not is kept as it is, not followed).
    public func track(resuming state: MonitorState, device: String) -> MonitorTrack {
        var track = MonitorTrack(lastFix: state.lastFix)
        let groups = lookups.hasSelectors ? roster.groups(of: device) : []
        track.lookups = lookups.lookups(for: device, groups: groups)
        track.expecting = expecting.filter { audiences[$0].includes(device: device, groups: groups) }
        for (id, membership) in state.memberships {
            if let region = indexByID[id], audiences[region].includes(device: device, groups: groups) {
                track.members[region] = membership
            } else {
                track.unmonitored[id] = membership
            }
        }
        for (id, episode) in state.speeding {
            if let region = indexByID[id], track.members[region] != nil { track.speeding[region] = episode }
        }
        return track
    }

    /// What to save of a device's track.
    public func state(of track: MonitorTrack) -> MonitorState {
        var memberships = track.unmonitored
        for (region, membership) in zip(track.members.regions, track.members.values) {
            memberships[ids[region]] = membership
        }
        var speeding: [String: SpeedEpisode] = [:]
        for (region, episode) in track.speeding { speeding[ids[region]] = episode }
        return MonitorState(lastFix: track.lastFix, memberships: memberships, speeding: speeding)
    }

    /// Processes one accepted fix (fixes must come in time order per device).
    public func process(_ fix: Fix, track: inout MonitorTrack, emit: (MonitorEvent) -> Void) throws {
        guard hasSpeedLimits else { return try processPlaces(fix, track: &track, emit: emit) }
        try processWatchingSpeed(fix, track: &track, emit: emit)
    }

    /// A fix's enters, exits and the rest: all but the speed limits' episodes.
    @inline(__always)
    func processPlaces(_ fix: Fix, track: inout MonitorTrack, emit: (MonitorEvent) -> Void) throws {
        let previous = track.lastFix
        track.lastFix = FixPoint(fix)
        // Nothing can happen while the fix stays in the quiet disc: it lies in the candidates'
        // box, no candidate's boundary is within reach and no dwell is due.
        if usesDiscs, let quiet = track.quiet, quiet.covers(fix) { return }
        track.quiet = nil
        updateCandidates(for: fix, previous: previous, track: &track)

        let position = fix.position
        // Every safe disc made for this fix is centred on it: one scale for all of them.
        let lonScale = track.longitudeScale.at(latitude: position.lat)
        // How far from the fix every candidate's settled disc reaches (nil once one is not
        // settled), and the largest longitude scale they measure with.
        var reach: Double? = .infinity
        var reachScale = lonScale
        for slot in track.candidates.indices {
            if hasSchedules, clocks[track.candidates[slot]] != nil {
                switch try stepOnSchedule(
                    track.candidates[slot], fix: fix, previous: previous, lonScale: lonScale, track: &track, emit: emit)
                {
                case .ordinary: break
                case .inactive: continue
                case .stepped:
                    // Stepped exactly across a start or an end: no disc holds for it.
                    track.discs[slot] = nil
                    reach = nil
                    continue
                }
            }
            // A settled state (plainly outside, or inside with no pending exit) holds while the
            // fix stays in the region's safe disc; only a dwell may be due then.
            if usesDiscs, let disc = track.discs[slot], disc.settled, let slack = disc.slackCovering(position),
                !disc.inside || !dwellPending(track.candidates[slot], track.members)
            {
                reach = reach.map { min($0, slack) }
                reachScale = max(reachScale, disc.metresPerDegreeLon)
                continue
            }
            try step(
                track.candidates[slot], slot: slot, fix: fix, previous: previous, lonScale: lonScale, track: &track,
                emit: emit)
            if let disc = track.discs[slot], disc.settled {
                reach = reach.map { min($0, disc.slack(at: position)) }
                reachScale = max(reachScale, disc.metresPerDegreeLon)
            } else {
                reach = nil
            }
        }
        // A period that starts with the device far from a region that expects it inside.
        if !track.expecting.isEmpty {
            for region in track.expecting where track.members[region] == nil && !track.candidates.contains(region) {
                absentAtStarts(region, fix: fix, previous: previous, emit: emit)
            }
        }
        // Regions the device is in (or entering) are followed wherever it goes.
        if !track.strays.isEmpty {
            for region in track.strays {
                if hasSchedules, clocks[region] != nil,
                    try stepOnSchedule(
                        region, fix: fix, previous: previous, lonScale: lonScale, track: &track, emit: emit)
                        != .ordinary
                {
                    continue
                }
                try step(region, slot: nil, fix: fix, previous: previous, lonScale: lonScale, track: &track, emit: emit)
            }
            track.strays.removeAll { track.members[$0] == nil }
        }
        if hasLayers { try switchLayers(fix: fix, track: &track, emit: emit) }
        // A visit in a region with a speed limit needs every fix's speed.
        if let reach, track.strays.isEmpty, !(hasSpeedLimits && watchesSpeed(track)) {
            track.quiet = quietDisc(
                around: position, at: fix.time, reach: reach, metresPerDegreeLon: reachScale, box: track.box,
                members: track.members, candidates: track.candidates, expecting: track.expecting)
        }
    }

    /// One exact step in a region, without its safe disc: the schedule's pieces of time between
    /// fixes. (The per-fix path calls the private step, which the compiler specialises for it.)
    func stepExactly(
        _ region: Int, fix: Fix, previous: FixPoint?, lonScale: Double, track: inout MonitorTrack,
        emit: (MonitorEvent) -> Void
    ) throws {
        try step(region, slot: nil, fix: fix, previous: previous, lonScale: lonScale, track: &track, emit: emit)
    }

    /// Whether a settled visit in the region still waits for its dwell or overstay. Takes the
    /// track's memberships, not the track, and reads the visit where it is: a copy of the
    /// whole track, or of the membership, per fix showed.
    private func dwellPending(_ region: Int, _ members: MembershipTable) -> Bool {
        members.awaitsTimedEvent(in: region, regionSettings[region])
    }

    /// The largest disc around the fix within `reach` (how far every candidate's safe disc
    /// reaches beyond it) and the candidates' box, until the earliest dwell falls due or the
    /// earliest start or end of a candidate's schedule comes. It
    /// measures with the largest scale of those discs (`metresPerDegreeLon`), so any point in
    /// it lies in each of them. Takes the parts of the track it reads, not the track (a copy of
    /// it per fix).
    private func quietDisc(
        around position: Position, at time: Double, reach: Double, metresPerDegreeLon lonScale: Double,
        box: Envelope?, members: MembershipTable, candidates: [Int], expecting: [Int]
    ) -> QuietDisc? {
        var radius = reach
        // Within the box, a later lookup would find the same candidates.
        if let box {
            radius = min(
                radius, (position.lon - box.minX) * lonScale, (box.maxX - position.lon) * lonScale,
                (position.lat - box.minY) * Geodesy.metresPerDegreeLatitude,
                (box.maxY - position.lat) * Geodesy.metresPerDegreeLatitude)
        }
        guard radius > 0 else { return nil }
        var until = Double.infinity
        // By index: each membership read where it is, not copied.
        for slot in members.regions.indices {
            let settings = regionSettings[members.regions[slot]]
            if let dwell = settings.dwell, !members.values[slot].dwellEmitted {
                until = min(until, members.values[slot].enter.time + dwell)
            }
            if let maxDwell = settings.maxDwell, !members.values[slot].overstayEmitted {
                until = min(until, members.values[slot].enter.time + maxDwell)
            }
        }
        if hasSchedules {
            for region in candidates {
                if let clock = clocks[region] { until = min(until, clock.nextBoundary(after: time)) }
            }
            for region in expecting {
                if let clock = clocks[region] { until = min(until, clock.nextBoundary(after: time)) }
            }
        }
        // 1 % spares rounding.
        let disc = SafeDisc(
            center: position, radius: min(radius, 5_000) * 0.99, inside: false, metresPerDegreeLon: lonScale)
        return QuietDisc(disc: disc, until: until)
    }

    // MARK: - Candidates

    /// Looks the candidate regions up again when the segment from the previous fix leaves the
    /// box they were looked up for; any region the segment can touch is among them.
    private func updateCandidates(for fix: Fix, previous: FixPoint?, track: inout MonitorTrack) {
        let position = fix.position
        if let box = track.box, box.contains(x: position.lon, y: position.lat),
            previous.map({ box.contains(x: $0.lon, y: $0.lat) }) ?? true
        {
            return
        }
        let box = Self.widen(Envelope(spanning: previous?.position ?? position, position), metres: Self.lookupMargin)
        // The arrays of the lookup before last are refilled.
        var candidates: [Int] = []
        var discs: [SafeDisc?] = []
        swap(&candidates, &track.spareCandidates)
        swap(&discs, &track.spareDiscs)
        lookups.query(box, track.lookups, into: &candidates)
        // Safe discs carry over for regions that stay candidates: the previous fix, the last one
        // tested against them, is inside them.
        discs.removeAll(keepingCapacity: true)
        var old = 0
        for region in candidates {
            while old < track.candidates.count, track.candidates[old] < region { old += 1 }
            discs.append(old < track.candidates.count && track.candidates[old] == region ? track.discs[old] : nil)
        }
        track.box = box
        swap(&candidates, &track.candidates)
        swap(&discs, &track.discs)
        (track.spareCandidates, track.spareDiscs) = (candidates, discs)
        track.quiet = nil
        track.strays = track.members.regions.filter { !track.candidates.contains($0) }.sorted()
    }

    static func widen(_ envelope: Envelope, metres: Double) -> Envelope {
        let latitude = max(abs(envelope.minY), abs(envelope.maxY))
        let dLat = metres / Geodesy.metresPerDegreeLatitude
        let dLon = metres / max(Geodesy.metresPerDegreeLongitude(atLatitude: min(latitude, 89.9)), 1)
        return envelope.expanded(dx: dLon, dy: dLat)
    }

    // MARK: - The state machine for one device and region

    /// `slot` is the region's place among the candidates, where its safe disc is kept;
    /// `lonScale` is metres per degree of longitude at the fix.
    private func step(
        _ region: Int, slot: Int?, fix: Fix, previous: FixPoint?, lonScale: Double,
        track: inout MonitorTrack, emit: (MonitorEvent) -> Void
    ) throws {
        // The area is lent, not retained: `areas` never changes and the monitor outlives the
        // step. (Held as a local, it was retained and released around each call on it: 3 % of
        // a scan's monitoring thread.)
        try Unmanaged.passUnretained(areas[region])._withUnsafeGuaranteedRef { area in
            try step(
                region, in: area, slot: slot, fix: fix, previous: previous, lonScale: lonScale, track: &track,
                emit: emit)
        }
    }

    private func step(
        _ region: Int, in area: RegionArea, slot: Int?, fix: Fix, previous: FixPoint?, lonScale: Double,
        track: inout MonitorTrack, emit: (MonitorEvent) -> Void
    ) throws {
        let settings = regionSettings[region]
        let position = fix.position
        // A disc measures with the fix's scale, or the region's own where that is larger.
        let discScale = max(lonScale, area.metresPerDegreeLon)
        func event(_ kind: EventKind, _ crossing: Crossing, visit: Double) {
            emit(
                MonitorEvent(
                    kind: kind, device: fix.device, regionID: ids[region], time: crossing.time, flags: crossing.flags,
                    visitEnteredAt: visit, position: crossing.position))
            // Leaving a region the device should be in is an absence, at the same time.
            if kind == .exit, expectsInside[region] {
                emit(
                    MonitorEvent(
                        kind: .absent, device: fix.device, regionID: ids[region], time: crossing.time,
                        flags: crossing.flags, visitEnteredAt: visit, position: crossing.position))
            }
        }

        // Still in the safe disc of a settled visit in a region with a dwell or a max_dwell:
        // only those may be due.
        if usesDiscs, let slot, let disc = track.discs[slot], disc.settled, disc.covers(position) {
            if disc.inside, track.members.awaitsTimedEvent(in: region, settings), var current = track.members[region] {
                emitTimedEventsIfDue(&current, certainUntil: fix.time, settings: settings, event: event)
                track.members[region] = current
            }
            return
        }

        let here = FixPoint(fix)
        var membership = track.members[region]
        // A pending state needs the side of the boundary and how a distance compares with a
        // threshold: the disc of the last exact test often answers both.
        let bounded = slot.flatMap { track.discs[$0] }.flatMap {
            boundedLocation(in: $0, at: fix, membership: membership, area: area, settings: settings)
        }
        let location = try bounded ?? area.locate(position)
        /// An enter waiting for its delay is confirmed once it has held (or the fix is deep).
        func confirmEnterIfDue(_ entering: inout Membership) {
            guard enterConfirmed(entering, fix: fix, depth: location.boundaryDistance, area: area, settings: settings)
            else { return }
            entering.phase = .inside
            event(.enter, entering.enter, visit: entering.enter.time)
            emitTimedEventsIfDue(&entering, certainUntil: fix.time, settings: settings, event: event)
        }

        switch membership?.phase {
        case nil:
            if location.inside, hasLayers, let layer = layers[region],
                try layerHeld(layer, by: region, slot: slot, fix: fix, track: &track, emit: emit)
            {
                return
            }
            if location.inside {
                let enter = try crossing(region, from: previous, to: here, entering: true)
                let dense = previous.map { fix.time - $0.time < settings.sparseInterval } ?? false
                var entering = Membership(
                    phase: .entering, enter: enter, outward: nil, armed: false, dwellEmitted: false,
                    denseFrom: dense ? previous : nil, insideFixes: 1)
                confirmEnterIfDue(&entering)
                membership = entering
            } else if settings.passThrough, let previous, fix.time - previous.time <= settings.maxGap,
                !(hasLayers && layers[region].map { holds($0, other: region, track) } == true),
                !(usesDiscs
                    && SafeDisc.stays(
                        within: location.boundaryDistance, from: previous.position, to: position,
                        metresPerDegreeLon: discScale))
            {
                try passThrough(region, from: previous, to: here, event: event)
            }
        case .entering?:
            if location.inside {
                membership!.countFixInside()
                confirmEnterIfDue(&membership!)
            } else {
                // Left before a fix confirmed the enter: what held is the time inside, from the
                // inward crossing to the outward one on this segment. Long enough, the enter is
                // confirmed however sparse the fixes, and the visit goes on with its exit pending
                // (a fix in the band holds it). Not where fixes came seconds apart on both sides
                // of the last inside: there only fixes inside confirm an enter (none did).
                let outward = try crossing(region, from: previous, to: here, entering: false)
                if var visit = membership, outward.time - visit.enter.time >= settings.enterDelay,
                    try loneFixBelieved(visit, region: region, previous: previous, here: here, settings: settings)
                {
                    visit.phase = .inside
                    visit.outward = outward
                    var enter = visit.enter
                    if visit.insideFixes < 2, settings.enterDelay > 0 { enter.flags.insert(.singleFix) }
                    event(.enter, enter, visit: visit.enter.time)
                    membership = leaving(
                        visit, outward: outward, boundaryDistance: location.boundaryDistance, fix: fix,
                        settings: settings, event: event)
                    if membership == nil, hasLayers, let layer = layers[region] { track.layerReleases[layer] = outward }
                } else {
                    membership = nil
                }
            }
        case .inside?:
            guard var visit = membership else { return }
            if location.inside {
                visit.outward = nil
                visit.armed = false
                visit.countFixInside()
                emitTimedEventsIfDue(&visit, certainUntil: fix.time, settings: settings, event: event)
                membership = visit
            } else {
                var boundaryDistance = location.boundaryDistance
                if visit.outward != nil, let previous, !segmentInOutsideDisc(slot, track, previous.position, position),
                    let back = try reentry(
                        region, from: previous, to: here,
                        distances: (
                            from: leastDistance(slot, track, previous.position),
                            to: bounded == nil ? location.boundaryDistance : leastDistance(slot, track, position)
                        ),
                        metresPerDegreeLon: discScale)
                {
                    // Back in and out again between two fixes outside: the visit held until the
                    // later crossing, and a fix beyond the band must be seen again since it.
                    visit.outward = back
                    visit.armed = false
                    if bounded != nil { boundaryDistance = try area.boundaryDistance(position) }  // compared with the band anew
                }
                // With no outward crossing yet, the previous fix was inside: this segment leaves.
                let outward = try visit.outward ?? crossing(region, from: previous, to: here, entering: false)
                membership = leaving(
                    visit, outward: outward, boundaryDistance: boundaryDistance, fix: fix, settings: settings,
                    event: event)
                if membership == nil, hasLayers, let layer = layers[region] { track.layerReleases[layer] = outward }
            }
        }
        track.members[region] = membership

        // A fresh safe disc around this fix when it was measured; the old one still holds when
        // it answered instead (the fix is in it).
        guard let slot else { return }
        // A visit of one fix inside is not settled: the next fix inside must be counted.
        let settled: Bool
        if let membership {
            settled = membership.phase == .inside && membership.outward == nil && membership.insideFixes >= 2
        } else {
            settled = true
        }
        if bounded == nil {
            track.discs[slot] = SafeDisc.within(
                location.boundaryDistance, of: position, inside: location.inside, metresPerDegreeLon: discScale,
                settled: settled)
        } else {
            track.discs[slot]?.settled = settled
        }
    }

    /// A visit at a fix outside its region, `outward` its crossing out (`boundaryDistance` from
    /// the fix): the exit is confirmed once a fix beyond the band was seen and the exit delay
    /// has held since the crossing.
    private func leaving(
        _ visit: Membership, outward: Crossing, boundaryDistance: Double, fix: Fix, settings: MonitorSettings,
        event: (EventKind, Crossing, Double) -> Void
    ) -> Membership? {
        var visit = visit
        visit.outward = outward
        if !visit.armed {
            let band = settings.band(accuracy: fix.accuracy)
            visit.armed = band == 0 || boundaryDistance > band
        }
        emitTimedEventsIfDue(&visit, certainUntil: outward.time, settings: settings, event: event)
        guard visit.armed, fix.time - outward.time >= settings.exitDelay else { return visit }
        var exit = outward
        if visit.insideFixes < 2, settings.enterDelay > 0 { exit.flags.insert(.singleFix) }
        event(.exit, exit, visit.enter.time)
        return nil
    }

    /// The location a pending state's step needs, from the disc of the last exact test when the
    /// fix is in it: the side is the disc's, and when the step compares the distance with a
    /// threshold (an enter's depth, an exit's band) the distance's bounds must lie on one side
    /// of it; the bound returned then compares as the true distance would. Nil: measure.
    private func boundedLocation(
        in disc: SafeDisc, at fix: Fix, membership: Membership?, area: RegionArea, settings: MonitorSettings
    ) -> AreaLocation? {
        guard usesDiscs, !disc.settled, let membership, let bounds = disc.bounds(at: fix.position) else { return nil }
        func comparedWith(_ threshold: Double) -> AreaLocation? {
            if bounds.least > threshold { return AreaLocation(inside: disc.inside, boundaryDistance: bounds.least) }
            if bounds.most <= threshold { return AreaLocation(inside: disc.inside, boundaryDistance: bounds.most) }
            return nil
        }
        // The distance is not used on the other paths.
        let unused = AreaLocation(inside: disc.inside, boundaryDistance: bounds.least)
        switch membership.phase {
        case .entering where disc.inside:
            guard !enterDelayPassed(membership, fix: fix, settings: settings) else { return unused }
            return comparedWith(deepEntryDepth(fix: fix, area: area, settings: settings))
        case .entering:
            // Outside: an enter confirmed by the time it held goes on as a visit leaving, which
            // compares the distance with the band.
            let band = settings.band(accuracy: fix.accuracy)
            return band > 0 ? comparedWith(band) : unused
        case .inside:
            let band = settings.band(accuracy: fix.accuracy)
            guard !disc.inside, !membership.armed, band > 0 else { return unused }
            return comparedWith(band)
        }
    }

    /// Between two outside fixes: a segment that crosses the region (deeper than the fixes'
    /// reported accuracy) is an enter and an exit, flagged `pass`.
    private func passThrough(
        _ region: Int, from previous: FixPoint, to here: FixPoint, event: (EventKind, Crossing, Double) -> Void
    ) throws {
        let settings = regionSettings[region]
        guard let chord = try chordThrough(region, from: previous, to: here) else { return }
        let (first, last) = (chord.lowerBound, chord.upperBound)
        let span = here.time - previous.time
        let enter = Crossing(
            time: previous.time + first * span, flags: .pass, position: Self.along(previous, here, first))
        let exit = Crossing(time: previous.time + last * span, flags: .pass, position: Self.along(previous, here, last))
        event(.enter, enter, enter.time)
        var timed: [(EventKind, Double)] = []
        if let dwell = settings.dwell, exit.time - enter.time >= dwell { timed.append((.dwell, dwell)) }
        if let maxDwell = settings.maxDwell, exit.time - enter.time >= maxDwell { timed.append((.overstay, maxDwell)) }
        for (kind, after) in timed.sorted(by: { $0.1 < $1.1 }) {
            event(kind, Crossing(time: enter.time + after, flags: .pass), enter.time)
        }
        event(.exit, exit, enter.time)
    }

    /// The part of the segment between two fixes outside a region that lies inside it, as
    /// fractions of the segment, when the segment goes deeper into the region than the fixes'
    /// reported accuracy (a corner clipped by GPS noise is not being inside).
    private func chordThrough(_ region: Int, from previous: FixPoint, to here: FixPoint) throws -> ClosedRange<Double>?
    {
        let area = areas[region]
        guard try area.segmentCrosses(from: previous.position, to: here.position) else { return nil }
        guard let chord = area.crossingSpan(from: previous.position, to: here.position),
            chord.upperBound > chord.lowerBound,
            try passDepth(area, from: previous, to: here, chord: chord) > chordDepth(region, previous, here)
        else { return nil }
        return chord
    }

    /// How deep a chord between two fixes must go into a region to count: deeper than the
    /// fixes' reported accuracy (times `passThroughDepthFactor`), at most halfway into a small
    /// region.
    private func chordDepth(_ region: Int, _ a: FixPoint, _ b: FixPoint) -> Double {
        min(passAccuracy(a, b) * regionSettings[region].passThroughDepthFactor, deepestDepths[region])
    }

    /// For a visit whose exit is pending, at a second fix outside in a row: where the segment
    /// from the previous fix left the region again, if it went back in (as a pass-through would
    /// count it). Sparse fixes must not hide that the device was inside until then.
    /// `distances` are at most the two fixes' distances to the region: a segment shorter than
    /// their sum and twice the depth it must reach cannot have been in it deep enough.
    private func reentry(
        _ region: Int, from previous: FixPoint, to here: FixPoint, distances: (from: Double, to: Double),
        metresPerDegreeLon: Double
    ) throws -> Crossing? {
        let settings = regionSettings[region]
        guard settings.passThrough, here.time - previous.time <= settings.maxGap,
            !(usesDiscs
                && SafeDisc.tooShortToEnter(
                    from: previous.position, to: here.position, distances: distances,
                    depth: chordDepth(region, previous, here),
                    metresPerDegreeLon: metresPerDegreeLon)),
            let chord = try chordThrough(region, from: previous, to: here)
        else { return nil }
        let last = chord.upperBound
        return Crossing(
            time: previous.time + last * (here.time - previous.time), flags: [],
            position: Self.along(previous, here, last))
    }

    /// Whether the slot's disc, outside the region, holds both ends of a segment: the segment
    /// then lies in it and cannot reach the region.
    private func segmentInOutsideDisc(_ slot: Int?, _ track: MonitorTrack, _ a: Position, _ b: Position) -> Bool {
        guard usesDiscs, let disc = slot.flatMap({ track.discs[$0] }), !disc.inside else { return false }
        return disc.covers(a) && disc.covers(b)
    }

    /// The least distance to a region's boundary its slot's disc allows at a position outside
    /// the region (0 without a disc outside it that covers the position).
    private func leastDistance(_ slot: Int?, _ track: MonitorTrack, _ position: Position) -> Double {
        guard let disc = slot.flatMap({ track.discs[$0] }), !disc.inside else { return 0 }
        return max(disc.bounds(at: position)?.least ?? 0, 0)
    }

    /// The enter holds once `enter_delay` has passed since the crossing, or at once for a fix
    /// deeper inside than its accuracy (times `deepEntryFactor`), so sparse traces do not lose
    /// visits; on a dense trace, from the second fix inside on: one fix alone may lie.
    /// `depth` is the fix's distance to the boundary.
    private func enterConfirmed(
        _ membership: Membership, fix: Fix, depth: Double, area: RegionArea, settings: MonitorSettings
    ) -> Bool {
        guard settings.enterDelay <= 0 || membership.denseFrom == nil || membership.insideFixes >= 2 else {
            return false
        }
        return enterDelayPassed(membership, fix: fix, settings: settings)
            || depth > deepEntryDepth(fix: fix, area: area, settings: settings)
    }

    private func enterDelayPassed(_ membership: Membership, fix: Fix, settings: MonitorSettings) -> Bool {
        settings.enterDelay <= 0 || fix.time - membership.enter.time >= settings.enterDelay
    }

    /// Whether a pending enter left at `here` may be a visit. One fix inside between fixes
    /// seconds apart on both sides may have lied: it is believed only when the path from the
    /// fix before it to this one crosses the region as a pass-through would (deeper than the
    /// fixes' accuracy), so the fix agrees with its neighbours. Otherwise, and on sparse
    /// traces, yes.
    private func loneFixBelieved(
        _ visit: Membership, region: Int, previous: FixPoint?, here: FixPoint, settings: MonitorSettings
    ) throws -> Bool {
        guard settings.enterDelay > 0, visit.insideFixes < 2, let before = visit.denseFrom, let previous,
            here.time - previous.time < settings.sparseInterval
        else { return true }
        return try chordThrough(region, from: before, to: here) != nil
    }

    /// How deep a fix must be to confirm an enter before its delay.
    private func deepEntryDepth(fix: Fix, area: RegionArea, settings: MonitorSettings) -> Double {
        let deepEnough = (fix.accuracy ?? Self.assumedAccuracy) * settings.deepEntryFactor
        // A region smaller than that depth would never confirm a passing visit: halfway to its
        // middle is deep enough there.
        return min(deepEnough, area.deepestUsefulDepth)
    }

    /// How deep a pass-through goes: the distance to the boundary from the middle of the part
    /// of the segment inside the region.
    private func passDepth(_ area: RegionArea, from a: FixPoint, to b: FixPoint, chord: ClosedRange<Double>) throws
        -> Double
    {
        let middle = (chord.lowerBound + chord.upperBound) / 2
        let position = Position(lon: a.lon + (b.lon - a.lon) * middle, lat: a.lat + (b.lat - a.lat) * middle)
        return try area.boundaryDistance(position)
    }

    /// A pass-through must go deeper than the fixes' reported accuracy (times
    /// `passThroughDepthFactor`, and at most halfway into a small region): a corner clipped by
    /// GPS noise is not a visit. Fixes that report no accuracy are taken at their word.
    private func passAccuracy(_ a: FixPoint, _ b: FixPoint) -> Double {
        max(a.accuracy ?? 0, b.accuracy ?? 0)
    }

    func emitTimedEventsIfDue(
        _ membership: inout Membership, certainUntil: Double, settings: MonitorSettings,
        event: (EventKind, Crossing, Double) -> Void
    ) {
        guard membership.phase == .inside else { return }
        let enter = membership.enter.time
        // The dwell, then the overstay, each once, in time order (the dwell first at the same
        // time). No array: this runs at every fix inside a region.
        var dwellAfter: Double?
        var overstayAfter: Double?
        if !membership.dwellEmitted, let dwell = settings.dwell, certainUntil - enter >= dwell {
            membership.dwellEmitted = true
            dwellAfter = dwell
        }
        if !membership.overstayEmitted, let maxDwell = settings.maxDwell, certainUntil - enter >= maxDwell {
            membership.overstayEmitted = true
            overstayAfter = maxDwell
        }
        func emit(_ kind: EventKind, after: Double?) {
            if let after { event(kind, Crossing(time: enter + after, flags: []), enter) }
        }
        if let overstay = overstayAfter, let dwell = dwellAfter, overstay < dwell {
            emit(.overstay, after: overstay)
            emit(.dwell, after: dwell)
        } else {
            emit(.dwell, after: dwellAfter)
            emit(.overstay, after: overstayAfter)
        }
    }

    /// When the boundary was crossed between `from` (one side) and `to` (the other): linear in
    /// time along the segment, or the inside fix's own time across a gap or with no `from`.
    private func crossing(_ region: Int, from: FixPoint?, to: FixPoint, entering: Bool) throws -> Crossing {
        let area = areas[region]
        let settings = regionSettings[region]
        guard let from else { return Crossing(time: to.time, flags: [], position: to.position) }
        let span = to.time - from.time
        if span > settings.maxGap {
            let inside = entering ? to : from
            return Crossing(time: inside.time, flags: .gap, position: inside.position)
        }
        let crossings = area.crossingSpan(from: from.position, to: to.position)
        // Entering: the last crossing before the inside fix; leaving: the first after it.
        var fraction = (entering ? crossings?.upperBound : crossings?.lowerBound) ?? (entering ? 1 : 0)
        if settings.passThrough, let crossings, crossings.upperBound > crossings.lowerBound {
            fraction = try outermostCrossing(region, from: from, to: to, entering: entering) ?? fraction
        }
        let clamped = min(max(fraction, 0), 1)
        return Crossing(time: from.time + clamped * span, flags: [], position: Self.along(from, to, clamped))
    }

    /// A segment that crosses the boundary more than once (a concave region, a hole): the
    /// crossing next to the inside fix is what a per-fix containment test sees, and what the
    /// raw monitor gives. Looking between fixes (pass-throughs on), a part of the segment
    /// inside the region farther from the inside fix, deeper than the fixes' accuracy as a
    /// pass-through must be, belongs to the visit too: entering, the crossing in before the
    /// earliest such part; leaving, the crossing out after the latest. Nil: none is.
    private func outermostCrossing(_ region: Int, from: FixPoint, to: FixPoint, entering: Bool) throws -> Double? {
        let area = areas[region]
        let crossings = area.crossings(from: from.position, to: to.position)
        guard crossings.count > 2 else { return nil }
        let depth = chordDepth(region, from, to)
        // The parts between crossings, away from the inside fix first.
        let parts = zip(crossings, crossings.dropFirst()).map { $0...$1 }
        for part in entering ? parts : parts.reversed() {
            let middle = (part.lowerBound + part.upperBound) / 2
            let location = try area.locate(Self.along(from, to, middle))
            if location.inside, location.boundaryDistance > depth {
                return entering ? part.lowerBound : part.upperBound
            }
        }
        return nil
    }

    /// The point a fraction of the way from one fix to another (planar in lon/lat).
    private static func along(_ from: FixPoint, _ to: FixPoint, _ fraction: Double) -> Position {
        Position(lon: from.lon + (to.lon - from.lon) * fraction, lat: from.lat + (to.lat - from.lat) * fraction)
    }
}
