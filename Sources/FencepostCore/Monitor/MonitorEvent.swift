public import FencepostGeometry

/// The kinds of geofence event.
public enum EventKind: String, Sendable, Hashable, Codable, CaseIterable {
    case enter, exit, dwell
    /// A visit still open the region's `max_dwell` after its enter.
    case overstay
    /// A device that should be inside (`expect: "inside"`) is not: outside when a period of the
    /// region's schedule starts, or leaving during one.
    case absent
    /// Inside a region with a `speed_limit_kmh`, faster than it for `speed_min_duration`: one
    /// per episode, at its start, with its top speed and how long it lasted.
    case overspeed

    /// The kinds every region can give; the others come from a region's rules, and summaries
    /// name them only when there are some.
    public static let always: [EventKind] = [.enter, .exit, .dwell]
}

/// Qualifiers of an event's time.
public struct EventFlags: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The bracketing fixes were more than `max_gap` apart: the time is a fix's, not interpolated.
    public static let gap = EventFlags(rawValue: 1)
    /// Entered and left between two consecutive fixes, both outside.
    public static let pass = EventFlags(rawValue: 2)
    /// At a start or end of a period of the region's schedule, not at a crossing: an enter with
    /// the device already inside, an exit (its visit closes with `schedule_ended`), an absent.
    public static let schedule = EventFlags(rawValue: 4)
    /// Reported by the device itself (an OS geofence transition), not computed from fixes.
    public static let device = EventFlags(rawValue: 8)
    /// Only one fix lay inside the region in the visit (a sparse trace's lone deep fix): it may
    /// be a fix that lied. On the exit, and on the enter when both come at once.
    public static let singleFix = EventFlags(rawValue: 16)
    /// Made by a fix posted live long after it was taken (a phone's queue sent once it was
    /// back online): history arriving late, not news.
    public static let replayed = EventFlags(rawValue: 32)

    private static let named: [(EventFlags, String)] = [
        (.gap, "gap"), (.pass, "pass"), (.schedule, "schedule"), (.device, "device"), (.singleFix, "single_fix"),
        (.replayed, "replayed"),
    ]

    /// The flags by name, in a fixed order: `["gap", "pass", "schedule", "device", "single_fix",
    /// "replayed"]`.
    public var names: [String] {
        Self.named.filter { contains($0.0) }.map(\.1)
    }

    public init(names: [String]) {
        self = []
        for (flag, name) in Self.named where names.contains(name) { insert(flag) }
    }
}

/// An `overspeed`'s measures: its top speed and how long it lasted.
public struct OverspeedEpisode: Sendable, Hashable {
    public var maxSpeedKmh: Double
    /// Seconds.
    public var duration: Double

    public init(maxSpeedKmh: Double, duration: Double) {
        self.maxSpeedKmh = maxSpeedKmh
        self.duration = duration
    }

    /// The event's properties: `{"duration": s, "max_speed_kmh": v}`, to 0.1.
    public var properties: JSONValue {
        .object([
            "max_speed_kmh": .number((maxSpeedKmh * 10).rounded() / 10),
            "duration": .number((duration * 10).rounded() / 10),
        ])
    }
}

/// An event the monitor emits for one device and region.
public struct MonitorEvent: Sendable, Hashable {
    public var kind: EventKind
    public var device: String
    public var regionID: String
    /// Seconds since the epoch: the best estimate of the boundary crossing (or enter + dwell).
    public var time: Double
    public var flags: EventFlags
    /// The enter time of the visit the event belongs to, which identifies the visit.
    public var visitEnteredAt: Double
    /// Where the boundary was crossed; nil for a dwell.
    public var position: Position?
    /// An `overspeed`'s episode.
    public var overspeed: OverspeedEpisode?

    public init(
        kind: EventKind, device: String, regionID: String, time: Double, flags: EventFlags, visitEnteredAt: Double,
        position: Position? = nil, overspeed: OverspeedEpisode? = nil
    ) {
        self.position = position
        self.overspeed = overspeed
        self.kind = kind
        self.device = device
        self.regionID = regionID
        self.time = time
        self.flags = flags
        self.visitEnteredAt = visitEnteredAt
    }
}
