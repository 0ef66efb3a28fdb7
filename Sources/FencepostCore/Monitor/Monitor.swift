public import FencepostGeometry

/// Turns a device's fixes into enter, exit and dwell events for the monitored regions.
///
/// The semantics are the design's ("Monitor semantics"): hysteresis band, enter and exit
/// delays, interpolated crossing times with back-dated exits, gaps, pass-through and dwell.
/// For speed it looks only at regions near the fix (an STRtree over band-widened envelopes,
/// reused while the device stays in the same box) and skips the exact test for a region
/// while the device stays within a disc that cannot reach the region's boundary.
///
/// Holds GEOS state: one monitor per thread. State lives in the caller's ``MonitorState``,
/// so the same monitor serves any number of devices.
public final class Monitor {
    /// A class, so the per-fix loop passes one reference rather than copying a whole region.
    final class Entry {
        let id: String
        let settings: MonitorSettings
        let area: RegionArea

        init(id: String, settings: MonitorSettings, area: RegionArea) {
            self.id = id
            self.settings = settings
            self.area = area
        }
    }

    let entries: [Entry]
    private let indexByID: [String: Int]
    /// Per region: whether it has a dwell time, read on the hot path without touching the entry.
    private let hasDwell: [Bool]
    private let index: SpatialIndex
    public let settings: MonitorSettings

    /// How far around the fixes a candidate lookup reaches, in metres.
    static let lookupMargin = 250.0
    /// Below this many metres from a region's bounding box, a safe disc is worth an exact distance.
    static let cheapDiscMinimum = 30.0
    /// Fixes without a reported accuracy are taken to be this good (metres).
    static let assumedAccuracy = 15.0

    /// Compiles the enabled regions; disabled ones are not monitored.
    public init(regions: [Region], settings: MonitorSettings, context: GEOSContext = GEOSContext()) throws {
        self.settings = settings
        var entries: [Entry] = []
        for region in regions where region.settings.enabled {
            entries.append(Entry(
                id: region.id, settings: settings.resolved(for: region),
                area: try RegionArea(shape: region.shape, context: context)))
        }
        self.entries = entries
        self.indexByID = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.id, $0) })
        self.hasDwell = entries.map { $0.settings.dwell != nil }
        self.index = try SpatialIndex(
            envelopes: entries.map { Self.widen($0.area.envelope, metres: $0.settings.widestBand + 1) }, context: context)
    }

    public var regionCount: Int { entries.count }

    /// Processes one accepted fix (fixes must come in time order per device).
    public func process(
        _ fix: Fix, state: inout MonitorState, cache: inout MonitorCache, emit: (MonitorEvent) -> Void
    ) throws {
        let previous = state.lastFix
        try updateCandidates(for: fix, previous: previous, state: state, cache: &cache)
        let position = fix.position
        for slot in cache.candidates.indices {
            // The hot path: a settled state (plainly outside, or inside with no pending exit)
            // holds while the fix stays in the region's safe disc; only a dwell may be due then.
            // A disc exists only in a settled state: every exact step replaces or clears it.
            if let disc = cache.discs[slot], disc.covers(position), !(disc.inside && hasDwell[cache.candidates[slot]]) {
                continue
            }
            try step(cache.candidates[slot], slot: slot, fix: fix, previous: previous, state: &state, cache: &cache, emit: emit)
        }
        // Regions the device is in (or entering) are followed wherever it goes; those not among
        // the candidates (rare: the device left their surroundings at once) are found here.
        if state.memberships.count > cache.memberFlags.count(where: { $0 }) {
            let candidates = Set(cache.candidates)
            let followed = state.memberships.keys.compactMap { indexByID[$0] }.filter { !candidates.contains($0) }
            for regionIndex in followed.sorted() {
                try step(regionIndex, slot: nil, fix: fix, previous: previous, state: &state, cache: &cache, emit: emit)
            }
        }
        state.lastFix = FixPoint(fix)
    }

    // MARK: - Candidates

    /// Looks the candidate regions up again when the segment from the previous fix leaves the
    /// box they were looked up for; any region the segment can touch is among them.
    private func updateCandidates(for fix: Fix, previous: FixPoint?, state: MonitorState, cache: inout MonitorCache) throws {
        let position = fix.position
        if let box = cache.box, box.contains(x: position.lon, y: position.lat),
            previous.map({ box.contains(x: $0.lon, y: $0.lat) }) ?? true
        {
            return
        }
        var points = [position]
        if let previous { points.append(previous.position) }
        let box = Self.widen(Envelope(covering: points), metres: Self.lookupMargin)
        let candidates = try index.query(box)
        // Safe discs carry over for regions that stay candidates: the previous fix, the last one
        // tested against them, is inside them.
        var discs = [SafeDisc?](repeating: nil, count: candidates.count)
        var old = 0
        for (slot, regionIndex) in candidates.enumerated() {
            while old < cache.candidates.count, cache.candidates[old] < regionIndex { old += 1 }
            if old < cache.candidates.count, cache.candidates[old] == regionIndex { discs[slot] = cache.discs[old] }
        }
        cache.box = box
        cache.candidates = candidates
        cache.discs = discs
        cache.memberFlags = state.memberships.isEmpty
            ? [Bool](repeating: false, count: candidates.count)
            : candidates.map { state.memberships[entries[$0].id] != nil }
    }

    static func widen(_ envelope: Envelope, metres: Double) -> Envelope {
        let latitude = max(abs(envelope.minY), abs(envelope.maxY))
        let dLat = metres / Geodesy.metresPerDegreeLatitude
        let dLon = metres / max(Geodesy.metresPerDegreeLongitude(atLatitude: min(latitude, 89.9)), 1)
        return envelope.expanded(dx: dLon, dy: dLat)
    }

    // MARK: - The state machine for one device and region

    /// `slot` is the region's place among the cached candidates, where its safe disc is kept.
    private func step(
        _ regionIndex: Int, slot: Int?, fix: Fix, previous: FixPoint?,
        state: inout MonitorState, cache: inout MonitorCache, emit: (MonitorEvent) -> Void
    ) throws {
        let entry = entries[regionIndex]
        let id = entry.id
        let settings = entry.settings
        let position = fix.position
        func event(_ kind: EventKind, _ crossing: Crossing, visit: Double) {
            emit(MonitorEvent(
                kind: kind, device: fix.device, regionID: id, time: crossing.time, flags: crossing.flags,
                visitEnteredAt: visit, position: crossing.position))
        }

        // Still in the safe disc of a settled visit in a region with a dwell: only the dwell
        // may be due.
        if let slot, let disc = cache.discs[slot], disc.covers(position) {
            if disc.inside, var current = state.memberships[id], !current.dwellEmitted {
                emitDwellIfDue(&current, certainUntil: fix.time, settings: settings, event: event)
                state.memberships[id] = current
            }
            return
        }

        // The candidate's flag says whether there is a membership to look up by id at all.
        var membership = slot.map { cache.memberFlags[$0] } ?? true ? state.memberships[id] : nil
        let here = FixPoint(fix)
        let inside = try entry.area.contains(position)
        /// An enter waiting for its delay is confirmed once it has held (or the fix is deep).
        func confirmEnterIfDue(_ entering: inout Membership) throws {
            guard try enterConfirmed(entering, fix: fix, area: entry.area, settings: settings) else { return }
            entering.phase = .inside
            event(.enter, entering.enter, visit: entering.enter.time)
            emitDwellIfDue(&entering, certainUntil: fix.time, settings: settings, event: event)
        }

        switch membership?.phase {
        case nil:
            if inside {
                let enter = crossing(from: previous, to: here, area: entry.area, entering: true, settings: settings)
                var entering = Membership(phase: .entering, enter: enter, outward: nil, armed: false, dwellEmitted: false)
                try confirmEnterIfDue(&entering)
                state.memberships[id] = entering
            } else if settings.passThrough, let previous, fix.time - previous.time <= settings.maxGap {
                try passThrough(entry, from: previous, to: here, event: event)
            }
        case .entering?:
            guard var entering = membership else { return }
            if inside {
                try confirmEnterIfDue(&entering)
                state.memberships[id] = entering
            } else {
                state.memberships[id] = nil  // left before the enter was confirmed
            }
        case .inside?:
            guard var visit = membership else { return }
            if inside {
                visit.outward = nil
                visit.armed = false
                emitDwellIfDue(&visit, certainUntil: fix.time, settings: settings, event: event)
                state.memberships[id] = visit
            } else {
                // With no outward crossing yet, the previous fix was inside: this segment leaves.
                let outward = visit.outward ?? crossing(from: previous, to: here, area: entry.area, entering: false, settings: settings)
                visit.outward = outward
                let band = settings.band(accuracy: fix.accuracy)
                if !visit.armed {
                    visit.armed = try band == 0 || entry.area.boundaryDistance(position) > band
                }
                emitDwellIfDue(&visit, certainUntil: outward.time, settings: settings, event: event)
                if visit.armed, fix.time - outward.time >= settings.exitDelay {
                    event(.exit, outward, visit: visit.enter.time)
                    state.memberships[id] = nil
                } else {
                    state.memberships[id] = visit
                }
            }
        }
        membership = state.memberships[id]

        // A fresh safe disc around this fix, for the settled states only.
        guard let slot else { return }
        cache.memberFlags[slot] = membership != nil
        if membership == nil || (membership?.phase == .inside && membership?.outward == nil) {
            // Outside, the distance to the bounding box is a safe radius when it is not small,
            // and costs nothing; otherwise the exact distance to the boundary.
            let nearby = membership == nil ? entry.area.distanceToEnvelope(position) : 0
            let distance = nearby > Self.cheapDiscMinimum ? nearby : try entry.area.boundaryDistance(position)
            cache.discs[slot] = SafeDisc(center: position, radius: distance, inside: membership != nil)
        } else {
            cache.discs[slot] = nil
        }
    }

    /// Between two outside fixes: a segment that crosses the region (deeper than the fixes'
    /// reported accuracy) is an enter and an exit, flagged `pass`.
    private func passThrough(_ entry: Entry, from previous: FixPoint, to here: FixPoint, event: (EventKind, Crossing, Double) -> Void) throws {
        guard try entry.area.segmentCrosses(from: previous.position, to: here.position) else { return }
        let fractions = entry.area.crossings(from: previous.position, to: here.position)
        guard let first = fractions.first, let last = fractions.last, last > first,
            try passDepth(entry.area, from: previous, to: here, chord: first...last)
                > min(passAccuracy(previous, here) * entry.settings.passThroughDepthFactor, entry.area.deepestUsefulDepth)
        else { return }
        let span = here.time - previous.time
        let enter = Crossing(time: previous.time + first * span, flags: .pass, position: Self.along(previous, here, first))
        let exit = Crossing(time: previous.time + last * span, flags: .pass, position: Self.along(previous, here, last))
        event(.enter, enter, enter.time)
        if let dwell = entry.settings.dwell, exit.time - enter.time >= dwell {
            event(.dwell, Crossing(time: enter.time + dwell, flags: .pass), enter.time)
        }
        event(.exit, exit, enter.time)
    }

    /// The enter holds once `enter_delay` has passed since the crossing, or at once for a fix
    /// deeper inside than its accuracy (times `deepEntryFactor`), so sparse traces do not lose
    /// visits.
    private func enterConfirmed(_ membership: Membership, fix: Fix, area: RegionArea, settings: MonitorSettings) throws -> Bool {
        if settings.enterDelay <= 0 || fix.time - membership.enter.time >= settings.enterDelay { return true }
        let depth = (fix.accuracy ?? Self.assumedAccuracy) * settings.deepEntryFactor
        // A region smaller than that depth would never confirm a passing visit: halfway to its
        // middle is deep enough there.
        return try area.boundaryDistance(fix.position) > min(depth, area.deepestUsefulDepth)
    }

    /// How deep a pass-through goes: the distance to the boundary from the middle of the part
    /// of the segment inside the region.
    private func passDepth(_ area: RegionArea, from a: FixPoint, to b: FixPoint, chord: ClosedRange<Double>) throws -> Double {
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

    private func emitDwellIfDue(
        _ membership: inout Membership, certainUntil: Double, settings: MonitorSettings,
        event: (EventKind, Crossing, Double) -> Void
    ) {
        guard membership.phase == .inside, !membership.dwellEmitted, let dwell = settings.dwell,
            certainUntil - membership.enter.time >= dwell
        else { return }
        membership.dwellEmitted = true
        event(.dwell, Crossing(time: membership.enter.time + dwell, flags: []), membership.enter.time)
    }

    /// When the boundary was crossed between `from` (one side) and `to` (the other): linear in
    /// time along the segment, or the inside fix's own time across a gap or with no `from`.
    private func crossing(from: FixPoint?, to: FixPoint, area: RegionArea, entering: Bool, settings: MonitorSettings) -> Crossing {
        guard let from else { return Crossing(time: to.time, flags: [], position: to.position) }
        let span = to.time - from.time
        if span > settings.maxGap {
            let inside = entering ? to : from
            return Crossing(time: inside.time, flags: .gap, position: inside.position)
        }
        let fractions = area.crossings(from: from.position, to: to.position)
        // Entering: the last crossing before the inside fix; leaving: the first after it.
        let fraction = (entering ? fractions.last : fractions.first) ?? (entering ? 1 : 0)
        let clamped = min(max(fraction, 0), 1)
        return Crossing(time: from.time + clamped * span, flags: [], position: Self.along(from, to, clamped))
    }

    /// The point a fraction of the way from one fix to another (planar in lon/lat).
    private static func along(_ from: FixPoint, _ to: FixPoint, _ fraction: Double) -> Position {
        Position(lon: from.lon + (to.lon - from.lon) * fraction, lat: from.lat + (to.lat - from.lat) * fraction)
    }
}
