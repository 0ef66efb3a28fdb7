public import FencepostGeometry

/// An entry, exit or dwell as the event repository keeps it.
public struct GeofenceEvent: Sendable, Hashable {
    public var id: String
    public var kind: EventKind
    public var device: String
    public var regionID: String
    public var visitID: String
    /// Seconds since the epoch.
    public var time: Double
    public var flags: EventFlags
    /// Where the boundary was crossed; nil for a dwell.
    public var position: Position?
    /// What the event measured (an `overspeed`'s top speed and duration), as its properties.
    public var overspeed: OverspeedEpisode?

    public init(_ event: MonitorEvent) {
        self.position = event.position
        self.overspeed = event.overspeed
        self.kind = event.kind
        self.device = event.device
        self.regionID = event.regionID
        self.time = event.time
        self.flags = event.flags
        self.id = DeterministicID.event(
            device: event.device, region: event.regionID, kind: event.kind, time: event.time)
        self.visitID = DeterministicID.visit(
            device: event.device, region: event.regionID, enteredAt: event.visitEnteredAt)
    }
}

extension GeofenceEvent {
    /// The `properties` column: `{}` but for an event that measured something.
    public var propertiesText: String {
        overspeed?.properties.canonicalText() ?? "{}"
    }
}

/// Why a visit ended.
public enum VisitExitReason: String, Sendable, Hashable, Codable {
    case exit
    case regionRemoved = "region_removed"
    case regionChanged = "region_changed"
    /// The region no longer applies to the device (its selectors or the roster changed).
    case regionUnassigned = "region_unassigned"
    /// A period of the region's schedule ended with the visit open.
    case scheduleEnded = "schedule_ended"
    /// The device was reset (`fencepost devices reset`): its state was forgotten.
    case reset
}

extension VisitExitReason {
    /// Why an exit event closes its visit: `schedule_ended` when a period ended, else `exit`.
    public init(closing exit: GeofenceEvent) {
        self = exit.flags.contains(.schedule) ? .scheduleEnded : .exit
    }
}

/// A stay in a region: an enter and, once it ends, its exit.
public struct Visit: Sendable, Hashable {
    public var id: String
    public var device: String
    public var regionID: String
    public var enteredAt: Double
    public var exitedAt: Double?
    public var exitReason: VisitExitReason?

    public var isOpen: Bool { exitedAt == nil }

    public init(
        id: String, device: String, regionID: String, enteredAt: Double, exitedAt: Double? = nil,
        exitReason: VisitExitReason? = nil
    ) {
        self.id = id
        self.device = device
        self.regionID = regionID
        self.enteredAt = enteredAt
        self.exitedAt = exitedAt
        self.exitReason = exitReason
    }
}

/// What one event does to the visits: the active-visit tracker's rule.
public enum VisitChange: Sendable, Hashable {
    case open(Visit)
    case close(visitID: String, at: Double, reason: VisitExitReason)
    case none

    /// An enter opens its visit, an exit closes it, a dwell, an overstay or an absent leaves it as
    /// it is.
    public init(for event: GeofenceEvent) {
        switch event.kind {
        case .enter:
            self = .open(
                Visit(id: event.visitID, device: event.device, regionID: event.regionID, enteredAt: event.time))
        case .exit:
            self = .close(visitID: event.visitID, at: event.time, reason: VisitExitReason(closing: event))
        case .dwell, .overstay, .absent, .overspeed:
            self = .none
        }
    }
}
