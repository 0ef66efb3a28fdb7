import FencepostGeometry

/// A region's schedule names a time zone the system's zone database does not know (it knew it
/// when the region was read).
public struct UnknownTimeZone: Error, CustomStringConvertible {
    public var region: String
    public var schedule: RegionSchedule

    public var description: String {
        "region \(region): the schedule's time zone \(schedule.timeZone) is not in the system's zone database"
    }
}

/// What ``Monitor/stepOnSchedule`` did for a region with a schedule.
enum ScheduledStep {
    /// Active from the previous fix to this one: the ordinary step is up to the caller.
    case ordinary
    /// Inactive throughout: nothing happens (an open visit was closed).
    case inactive
    /// A period started or ended in between: the region was stepped exactly, piece by piece.
    case stepped
}

extension Monitor {
    /// The schedule's part of a fix's step in a region with a schedule. Between two fixes the
    /// time is cut at each start and end of a period; the pieces in which the region is active
    /// are stepped as usual (from and to the device's position at the cut, interpolated on the
    /// segment, or the previous fix's within `max_gap`). A period's end closes an open visit
    /// with an exit flagged `schedule` at the end time (the visit's reason: `schedule_ended`); a
    /// start with the device inside opens one with an enter flagged `schedule` at the start time.
    func stepOnSchedule(
        _ region: Int, fix: Fix, previous: FixPoint?, lonScale: Double, track: inout MonitorTrack,
        emit: (MonitorEvent) -> Void
    ) throws -> ScheduledStep {
        guard let clock = clocks[region] else { return .ordinary }
        let boundaries: [ScheduleBoundary]
        switch clock.activity(from: previous?.time, to: fix.time) {
        case .active:
            return .ordinary
        case .inactive:
            // Only a schedule edited while the visit was open leaves one here.
            endPeriod(region, at: previous?.time ?? fix.time, device: fix.device, track: &track, emit: emit)
            return .inactive
        case .changes(let found):
            boundaries = found
        }
        let maxGap = regionSettings[region].maxGap
        var from = previous
        for (index, boundary) in boundaries.enumerated() {
            let point = previous.flatMap { Self.point(at: boundary.time, from: $0, to: fix, maxGap: maxGap) }
            if boundary.starts {
                from = point
                try startPeriod(
                    region, at: boundary.time, point: point, fix: fix, fixInPeriod: index == boundaries.count - 1,
                    track: &track, emit: emit)
            } else {
                if let point, let start = from, point.time > start.time {
                    try stepExactly(
                        region, fix: fix.moved(to: point), previous: start, lonScale: lonScale, track: &track,
                        emit: emit)
                }
                endPeriod(region, at: boundary.time, device: fix.device, track: &track, emit: emit)
                from = nil
            }
        }
        if boundaries.last?.starts == true, from.map({ $0.time < fix.time }) ?? true {
            try stepExactly(region, fix: fix, previous: from, lonScale: lonScale, track: &track, emit: emit)
        }
        return .stepped
    }

    /// A period starts: with the device inside (at `point`), a visit opens at the start; with
    /// it outside, a region that expects it inside says `absent`. Where it was is unknown (no
    /// fix within `max_gap` before the start), the first fix of the period tells whether it is
    /// absent (flagged `gap`), when this fix is in the period.
    private func startPeriod(
        _ region: Int, at start: Double, point: FixPoint?, fix: Fix, fixInPeriod: Bool, track: inout MonitorTrack,
        emit: (MonitorEvent) -> Void
    ) throws {
        func event(_ kind: EventKind, _ flags: EventFlags, at position: Position?) {
            emit(
                MonitorEvent(
                    kind: kind, device: fix.device, regionID: ids[region], time: start, flags: flags,
                    visitEnteredAt: start, position: position))
        }
        if let point {
            if try areas[region].locate(point.position).inside {
                track.members[region] = Membership(
                    phase: .inside, enter: Crossing(time: start, flags: .schedule, position: point.position),
                    outward: nil, armed: false, dwellEmitted: false)
                event(.enter, .schedule, at: point.position)
            } else if expectsInside[region] {
                event(.absent, .schedule, at: point.position)
            }
        } else if expectsInside[region], fixInPeriod, try !areas[region].locate(fix.position).inside {
            event(.absent, [.schedule, .gap], at: nil)
        }
    }

    /// For a region that expects the device inside, far from the segment from the previous fix
    /// to this one (no candidate): each period that starts in between is an `absent`, as
    /// ``startPeriod`` says it.
    func absentAtStarts(_ region: Int, fix: Fix, previous: FixPoint?, emit: (MonitorEvent) -> Void) {
        guard let previous, let clock = clocks[region] else { return }
        let boundaries = clock.boundaries(after: previous.time, through: fix.time)
        let maxGap = regionSettings[region].maxGap
        for (index, boundary) in boundaries.enumerated() where boundary.starts {
            let point = Self.point(at: boundary.time, from: previous, to: fix, maxGap: maxGap)
            guard point != nil || index == boundaries.count - 1 else { continue }
            emit(
                MonitorEvent(
                    kind: .absent, device: fix.device, regionID: ids[region], time: boundary.time,
                    flags: point == nil ? [.schedule, .gap] : .schedule, visitEnteredAt: boundary.time,
                    position: point?.position))
        }
    }

    /// A period ends (or a region is found inactive with a visit open): the visit closes. An
    /// exit already under way (out beyond the band, waiting only for its delay) is confirmed at
    /// its crossing; otherwise the exit is at `end`, flagged `schedule`. An enter still waiting
    /// for its delay is confirmed when it held long enough, else dropped.
    func endPeriod(
        _ region: Int, at end: Double, device: String, track: inout MonitorTrack, emit: (MonitorEvent) -> Void
    ) {
        guard var visit = track.members[region] else { return }
        track.members[region] = nil
        let settings = regionSettings[region]
        let enteredAt = visit.enter.time
        func event(_ kind: EventKind, _ crossing: Crossing) {
            emit(
                MonitorEvent(
                    kind: kind, device: device, regionID: ids[region], time: crossing.time, flags: crossing.flags,
                    visitEnteredAt: enteredAt, position: crossing.position))
        }
        if visit.phase == .entering {
            guard end - visit.enter.time >= settings.enterDelay else { return }
            visit.phase = .inside
            event(.enter, visit.enter)
        }
        let exit = visit.armed ? visit.outward : nil
        emitTimedEventsIfDue(&visit, certainUntil: exit?.time ?? end, settings: settings) { kind, crossing, _ in
            event(kind, crossing)
        }
        if let exit {
            event(.exit, exit)
            if expectsInside[region] { event(.absent, exit) }
        } else {
            event(.exit, Crossing(time: end, flags: .schedule))
        }
    }

    /// Where the device was at `time`, between the previous fix and `fix`: on the segment when
    /// the two are within `max_gap`, else at the previous fix when it is within `max_gap` of
    /// the time; nil when nothing that recent is known.
    static func point(at time: Double, from previous: FixPoint, to fix: Fix, maxGap: Double) -> FixPoint? {
        let span = fix.time - previous.time
        if span <= maxGap, span > 0 {
            let fraction = (time - previous.time) / span
            let accuracy = [previous.accuracy, fix.accuracy].compactMap { $0 }.max()
            return FixPoint(
                time: time, lat: previous.lat + (fix.lat - previous.lat) * fraction,
                lon: previous.lon + (fix.lon - previous.lon) * fraction, accuracy: accuracy)
        }
        guard time - previous.time <= maxGap else { return nil }
        return FixPoint(time: time, lat: previous.lat, lon: previous.lon, accuracy: previous.accuracy)
    }
}

extension Fix {
    /// The same device's fix at another time and place.
    func moved(to point: FixPoint) -> Fix {
        Fix(device: device, time: point.time, lat: point.lat, lon: point.lon, accuracy: point.accuracy)
    }
}
