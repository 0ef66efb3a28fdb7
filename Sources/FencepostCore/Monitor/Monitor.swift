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
    struct Entry {
        let region: Region
        let settings: MonitorSettings
        let area: RegionArea
    }

    let entries: [Entry]
    private let indexByID: [String: Int]
    private let index: SpatialIndex
    public let settings: MonitorSettings

    /// How far around the fixes a candidate lookup reaches, in metres.
    static let lookupMargin = 250.0
    /// Fixes without a reported accuracy are taken to be this good (metres).
    static let assumedAccuracy = 15.0

    /// Compiles the enabled regions; disabled ones are not monitored.
    public init(regions: [Region], settings: MonitorSettings, context: GEOSContext = GEOSContext()) throws {
        self.settings = settings
        var entries: [Entry] = []
        for region in regions where region.settings.enabled {
            entries.append(Entry(
                region: region, settings: settings.resolved(for: region),
                area: try RegionArea(shape: region.shape, context: context)))
        }
        self.entries = entries
        self.indexByID = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.region.id, $0) })
        self.index = try SpatialIndex(
            envelopes: entries.map { Self.widen($0.area.envelope, metres: $0.settings.widestBand + 1) }, context: context)
    }

    public var regionCount: Int { entries.count }

    /// Processes one accepted fix (fixes must come in time order per device).
    public func process(
        _ fix: Fix, state: inout MonitorState, cache: inout MonitorCache, emit: (MonitorEvent) -> Void
    ) throws {
        let previous = state.lastFix
        for regionIndex in try candidates(for: fix, previous: previous, state: state, cache: &cache) {
            try step(regionIndex, fix: fix, previous: previous, state: &state, cache: &cache, emit: emit)
        }
        state.lastFix = FixPoint(fix)
    }

    // MARK: - Candidates

    private func candidates(for fix: Fix, previous: FixPoint?, state: MonitorState, cache: inout MonitorCache) throws -> [Int] {
        let position = fix.position
        if let box = cache.box, box.contains(x: position.lon, y: position.lat),
            previous.map({ box.contains(x: $0.lon, y: $0.lat) }) ?? true
        {
            // The box holds the whole segment: the cached candidates are all it can touch.
        } else {
            var points = [position]
            if let previous { points.append(previous.position) }
            let box = Self.widen(Envelope(covering: points), metres: Self.lookupMargin)
            cache.box = box
            cache.candidates = try index.query(box)
            cache.discs.removeAll(keepingCapacity: true)
        }
        guard !state.memberships.isEmpty else { return cache.candidates }
        var all = cache.candidates
        for id in state.memberships.keys {
            if let regionIndex = indexByID[id], !all.contains(regionIndex) { all.append(regionIndex) }
        }
        return all.sorted()
    }

    static func widen(_ envelope: Envelope, metres: Double) -> Envelope {
        let latitude = max(abs(envelope.minY), abs(envelope.maxY))
        let dLat = metres / Geodesy.metresPerDegreeLatitude
        let dLon = metres / max(Geodesy.metresPerDegreeLongitude(atLatitude: min(latitude, 89.9)), 1)
        return envelope.expanded(dx: dLon, dy: dLat)
    }

    // MARK: - The state machine for one device and region

    private func step(
        _ regionIndex: Int, fix: Fix, previous: FixPoint?,
        state: inout MonitorState, cache: inout MonitorCache, emit: (MonitorEvent) -> Void
    ) throws {
        let entry = entries[regionIndex]
        let id = entry.region.id
        let settings = entry.settings
        var membership = state.memberships[id]
        let position = fix.position
        let here = FixPoint(fix)
        func event(_ kind: EventKind, _ crossing: Crossing, visit: Double) {
            emit(MonitorEvent(kind: kind, device: fix.device, regionID: id, time: crossing.time, flags: crossing.flags, visitEnteredAt: visit))
        }

        // Settled states may skip the exact test while the fix stays in the safe disc.
        let settledInside = membership.map { $0.phase == .inside && $0.outward == nil } ?? false
        if membership == nil || settledInside, let disc = cache.discs[regionIndex], disc.inside == settledInside,
            disc.covers(position)
        {
            guard var current = membership else { return }
            current.lastInside = here
            emitDwellIfDue(&current, certainUntil: fix.time, settings: settings, event: event)
            state.memberships[id] = current
            return
        }

        let inside = try entry.area.contains(position)
        switch membership?.phase {
        case nil:
            if inside {
                let enter = crossing(from: previous, to: here, area: entry.area, entering: true, settings: settings)
                var entering = Membership(phase: .entering, enter: enter, lastInside: here, outward: nil, armed: false, dwellEmitted: false)
                if try enterConfirmed(entering, fix: fix, area: entry.area, settings: settings) {
                    entering.phase = .inside
                    event(.enter, entering.enter, visit: entering.enter.time)
                    emitDwellIfDue(&entering, certainUntil: fix.time, settings: settings, event: event)
                }
                state.memberships[id] = entering
            } else {
                if settings.passThrough, let previous, fix.time - previous.time <= settings.maxGap,
                    try entry.area.segmentTouches(from: previous.position, to: position)
                {
                    let fractions = entry.area.crossings(from: previous.position, to: position)
                    if let first = fractions.first, let last = fractions.last, last > first,
                        try passDepth(entry.area, from: previous, to: fix, chord: first...last) > passAccuracy(previous, fix)
                    {
                        let span = fix.time - previous.time
                        let enter = Crossing(time: previous.time + first * span, flags: .pass)
                        let exit = Crossing(time: previous.time + last * span, flags: .pass)
                        event(.enter, enter, visit: enter.time)
                        if let dwell = settings.dwell, exit.time - enter.time >= dwell {
                            event(.dwell, Crossing(time: enter.time + dwell, flags: .pass), visit: enter.time)
                        }
                        event(.exit, exit, visit: enter.time)
                    }
                }
            }
        case .entering?:
            guard var entering = membership else { return }
            if inside {
                entering.lastInside = here
                if try enterConfirmed(entering, fix: fix, area: entry.area, settings: settings) {
                    entering.phase = .inside
                    event(.enter, entering.enter, visit: entering.enter.time)
                    emitDwellIfDue(&entering, certainUntil: fix.time, settings: settings, event: event)
                }
                state.memberships[id] = entering
            } else {
                state.memberships[id] = nil  // left before the enter was confirmed
            }
        case .inside?:
            guard var visit = membership else { return }
            if inside {
                visit.lastInside = here
                visit.outward = nil
                visit.armed = false
                emitDwellIfDue(&visit, certainUntil: fix.time, settings: settings, event: event)
                state.memberships[id] = visit
            } else {
                let outward = visit.outward ?? crossing(from: visit.lastInside, to: here, area: entry.area, entering: false, settings: settings)
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
        if membership == nil || (membership?.phase == .inside && membership?.outward == nil) {
            let distance = try entry.area.boundaryDistance(position)
            cache.discs[regionIndex] = SafeDisc(center: position, radius: distance, inside: membership != nil)
        } else {
            cache.discs[regionIndex] = nil
        }
    }

    /// The enter holds once `enter_delay` has passed since the crossing, or at once for a fix
    /// deeper inside than its accuracy (times `deepEntryFactor`), so sparse traces do not lose
    /// visits.
    private func enterConfirmed(_ membership: Membership, fix: Fix, area: RegionArea, settings: MonitorSettings) throws -> Bool {
        if settings.enterDelay <= 0 || fix.time - membership.enter.time >= settings.enterDelay { return true }
        return try area.boundaryDistance(fix.position) > (fix.accuracy ?? Self.assumedAccuracy) * settings.deepEntryFactor
    }

    /// How deep a pass-through goes: the distance to the boundary from the middle of the part
    /// of the segment inside the region.
    private func passDepth(_ area: RegionArea, from a: FixPoint, to b: Fix, chord: ClosedRange<Double>) throws -> Double {
        let middle = (chord.lowerBound + chord.upperBound) / 2
        let position = Position(lon: a.lon + (b.lon - a.lon) * middle, lat: a.lat + (b.lat - a.lat) * middle)
        return try area.boundaryDistance(position)
    }

    /// A pass-through must go deeper than the fixes could be off: a corner clipped by GPS noise
    /// is not a visit.
    private func passAccuracy(_ a: FixPoint, _ b: Fix) -> Double {
        max(a.accuracy ?? Self.assumedAccuracy, b.accuracy ?? Self.assumedAccuracy)
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
        guard let from else { return Crossing(time: to.time, flags: []) }
        let span = to.time - from.time
        if span > settings.maxGap {
            return Crossing(time: entering ? to.time : from.time, flags: .gap)
        }
        let fractions = area.crossings(from: from.position, to: to.position)
        // Entering: the last crossing before the inside fix; leaving: the first after it.
        let fraction = (entering ? fractions.last : fractions.first) ?? (entering ? 1 : 0)
        return Crossing(time: from.time + min(max(fraction, 0), 1) * span, flags: [])
    }
}
