import FencepostGeometry

/// Stops and trips of one device, found fix by fix with no region at all.
///
/// The tracker watches one place at a time: where the device is now. Fixes within
/// ``MovementSettings/radius`` of the place's centre (their accuracy credited) keep it; once the
/// device has been there ``MovementSettings/minDuration`` seconds the place is a stop. Fixes
/// away from it are held: a departure needs two of them spanning
/// ``MovementSettings/leaveDelay`` seconds, so one stray fix never ends a stop, and a fix back
/// at the place forgets them. The way between two stops is a trip, measured by a ``TripMeter``.
///
/// Its whole state is a value (`Codable`): an open stop is persisted between runs as an open
/// visit is. Fixes must come in time order; a fix not later than the last one is ignored.
public struct MovementTracker: Sendable, Hashable, Codable {
    public let device: String
    /// The place the device is at or was last seen settling at.
    private var place: Place?
    /// Fixes away from the place since its last fix there.
    private var away: [FixPoint] = []
    /// The way since the last stop (nil at a stop, and before the first place was left).
    private var way: TripMeter?
    /// The stop the way left.
    private var leftStop: Stop?
    private var lastTime: Double?
    /// Fixes ignored for an accuracy worse than ``MovementSettings/maxAccuracy``.
    public private(set) var inaccurate = 0

    /// What one fix changed.
    public enum Change: Sendable, Hashable {
        /// The device has stayed long enough: a stop, open.
        case stopOpened(Stop)
        /// The device left (or fell silent past the gap): the stop, closed.
        case stopClosed(Stop)
        /// A way from one stop to the next (or to a gap), complete.
        case trip(Trip)
    }

    public init(device: String) {
        self.device = device
    }

    /// The stop the device is at, if it is at one.
    public var openStop: Stop? {
        guard let place, place.isStop else { return nil }
        return place.stop(device: device, isOpen: true)
    }

    public mutating func add(_ fix: FixPoint, settings: MovementSettings) -> [Change] {
        if let accuracy = fix.accuracy, accuracy > settings.maxAccuracy {
            inaccurate += 1
            return []
        }
        if let lastTime, fix.time <= lastTime { return [] }
        var changes: [Change] = []
        if let lastTime, fix.time - lastTime > settings.maxGap, !holds(fix, settings) {
            // The fixes away before the silence are where the device went: they start what
            // comes next, and the fix after it may be there still.
            if !away.isEmpty { depart(settings: settings, &changes) }
            if !holds(fix, settings) { breakAtGap(&changes) }
        }
        lastTime = fix.time
        process(fix, settings: settings, &changes)
        return changes
    }

    // MARK: - Steps

    private func holds(_ fix: FixPoint, _ settings: MovementSettings) -> Bool {
        place?.holds(fix, radius: settings.radius) ?? false
    }

    private mutating func process(_ fix: FixPoint, settings: MovementSettings, _ changes: inout [Change]) {
        guard var current = place else {
            place = Place(first: fix)
            return
        }
        if current.holds(fix, radius: settings.radius) {
            if !current.isStop { current.way.append(contentsOf: away) }
            away.removeAll()
            current.include(fix, core: settings.core)
            place = current
            if !current.isStop, fix.time - current.first.time >= settings.minDuration,
                let settled = current.settled(settings)
            {
                settle(settled, &changes)
            }
            return
        }
        if away.isEmpty, settled(at: current.last, until: fix, settings) {
            // The device stayed from the place's last fix to this one, away from the place:
            // the place ends, and a new one starts at its last fix.
            place = nil
            leave(current, &changes)
            place = Place(first: current.last)
            process(fix, settings: settings, &changes)
            return
        }
        away.append(fix)
        if away.count >= 2, away[away.count - 1].time - away[0].time >= settings.leaveDelay {
            depart(settings: settings, &changes)
        }
    }

    /// The place has lasted: it is a stop from its first fix near its centre, and the way that
    /// led to it ends there (the fixes before, on its rim, were the approach).
    private mutating func settle(_ stop: (place: Place, approach: [FixPoint]), _ changes: inout [Change]) {
        place = stop.place
        let opened = stop.place.stop(device: device, isOpen: true)
        if way != nil {
            for fix in stop.approach { way?.add(fix) }
            if var meter = way {
                if stop.place.first.time > meter.last.time { meter.add(stop.place.first) }
                changes.append(.trip(trip(meter, to: opened)))
            }
        }
        way = nil
        changes.append(.stopOpened(opened))
    }

    /// Whether two consecutive fixes say the device stayed between them: close together and far
    /// apart in time. Only a sparse trace has such pairs; they are a stay even when the second
    /// fix is away from the place's centre (phones report where they are less often when they
    /// do not move, and a place's centre drifts with few fixes).
    private func settled(at previous: FixPoint, until fix: FixPoint, _ settings: MovementSettings) -> Bool {
        guard fix.time - previous.time >= settings.minDuration else { return false }
        let credit = min(fix.accuracy ?? 0, settings.radius)
        return Geodesy.distance(previous.position, fix.position) - credit <= settings.radius
    }

    /// The place is left. A stop closes at its last fix near its centre, and the way starts
    /// there, through the fixes on its rim after it; a place too short for a stop was part of
    /// the way.
    private mutating func leave(_ current: Place, _ changes: inout [Change]) {
        if current.isStop {
            let stop = current.stop(device: device, isOpen: false)
            changes.append(.stopClosed(stop))
            leftStop = stop
            way = TripMeter(from: current.nearCentre)
            for fix in current.rim { way?.add(fix) }
        } else {
            extendWay(with: current.way)
        }
    }

    /// Two fixes away spanning the leave delay: the place is left. The fixes away are watched
    /// again from scratch, as the start of whatever comes next.
    private mutating func depart(settings: MovementSettings, _ changes: inout [Change]) {
        guard let current = place else { return }
        let pending = away
        away.removeAll()
        place = nil
        leave(current, &changes)
        for fix in pending { process(fix, settings: settings, &changes) }
    }

    /// Silence past the gap: whatever was going on ended at the last fix before it.
    private mutating func breakAtGap(_ changes: inout [Change]) {
        if let current = place { leave(current, &changes) }
        extendWay(with: away)
        if let meter = way, meter.fixes > 1 { changes.append(.trip(trip(meter, to: nil))) }
        place = nil
        away.removeAll()
        way = nil
        leftStop = nil
    }

    private mutating func extendWay(with fixes: [FixPoint]) {
        guard let first = fixes.first else { return }
        if way == nil {
            way = TripMeter(from: first)
            for fix in fixes.dropFirst() { way?.add(fix) }
        } else {
            for fix in fixes { way?.add(fix) }
        }
    }

    private func trip(_ meter: TripMeter, to stop: Stop?) -> Trip {
        let settled = meter.settled
        return Trip(
            device: device, start: settled.first.time, end: settled.last.time, distance: settled.distance,
            maxSpeed: settled.maxSpeed, fixes: settled.fixes, fromStop: leftStop, toStop: stop,
            startLat: settled.first.lat, startLon: settled.first.lon, endLat: settled.last.lat,
            endLon: settled.last.lon)
    }
}

extension MovementTracker {
    /// A place the device is at: its fixes' accuracy-weighted centre.
    struct Place: Sendable, Hashable, Codable {
        var first: FixPoint
        /// The last fix at the place.
        var last: FixPoint
        var weightedLat = 0.0
        var weightedLon = 0.0
        var weight = 0.0
        var fixes = 0
        var isStop = false
        /// Every fix since the first while the place is not yet a stop (strays included):
        /// if it never becomes one, they were part of a way. At most `minDuration` of fixes.
        var way: [FixPoint] = []
        /// Once a stop: its last fix near the centre (within ``MovementSettings/core``), where
        /// the stop ends when the device leaves, and the fixes since, on the stop's rim.
        var nearCentre: FixPoint
        var rim: [FixPoint] = []

        /// Fixes on the rim kept at most; past this many, the oldest counts as near the centre
        /// (a device that wanders about the rim for long is still at the stop).
        static let rimLimit = 1000

        init(first: FixPoint) {
            self.first = first
            last = first
            nearCentre = first
            include(first, core: 0)
        }

        var centre: Position { Position(lon: weightedLon / weight, lat: weightedLat / weight) }

        func holds(_ fix: FixPoint, radius: Double) -> Bool {
            let credit = min(fix.accuracy ?? 0, radius)
            return Geodesy.distance(centre, fix.position) - credit <= radius
        }

        mutating func include(_ fix: FixPoint, core: Double) {
            let accuracy = max(fix.accuracy ?? 10, 5)
            let w = 1 / (accuracy * accuracy)
            weightedLat += fix.lat * w
            weightedLon += fix.lon * w
            weight += w
            fixes += 1
            last = fix
            guard isStop else {
                way.append(fix)
                return
            }
            if holds(fix, radius: core) {
                nearCentre = fix
                rim.removeAll()
            } else {
                rim.append(fix)
                if rim.count > Self.rimLimit { nearCentre = rim.removeFirst() }
            }
        }

        /// The place as a stop, if it is one: from its first fix near the centre (the fixes
        /// before are the approach, returned apart) for ``MovementSettings/minDuration`` at
        /// least, drifting no faster than ``MovementSettings/stopSpeed`` (a walk is no stop,
        /// however slowly its centre follows it). With no fix near the centre (two fixes far
        /// apart on a sparse trace), the stop is all of them.
        func settled(_ settings: MovementSettings) -> (place: Place, approach: [FixPoint])? {
            let core = settings.core
            let start = way.firstIndex { holds($0, radius: core) } ?? 0
            let seconds = last.time - way[start].time
            guard seconds >= settings.minDuration,
                Geodesy.distance(way[start].position, last.position) <= settings.stopSpeed * seconds
            else { return nil }
            var place = Place(first: way[start])
            for fix in way[(start + 1)...] { place.include(fix, core: 0) }
            place.isStop = true
            place.way = []
            let end = way.lastIndex { place.holds($0, radius: core) }.map { max($0, start) } ?? way.count - 1
            place.nearCentre = way[end]
            place.rim = Array(way[(end + 1)...])
            return (place, Array(way[..<start]))
        }

        func stop(device: String, isOpen: Bool) -> Stop {
            let centre = centre
            return Stop(
                device: device, start: first.time, end: isOpen ? last.time : nearCentre.time, lat: centre.lat,
                lon: centre.lon, fixes: fixes, isOpen: isOpen)
        }
    }
}
