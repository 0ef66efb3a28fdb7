public import FencepostGeometry

/// An enter or exit the device reported itself (its OS watched the region): an OwnTracks
/// `transition`, or `POST /v1/devices/{id}/transitions`.
public struct DeviceTransition: Sendable, Hashable {
    public var device: String
    public var regionID: String
    /// `.enter` or `.exit`.
    public var kind: EventKind
    /// Seconds since the epoch: when the device says it crossed.
    public var time: Double
    /// Metres, as the device reported it.
    public var accuracy: Double?
    /// Where the device was when it reported, when it said.
    public var position: Position?

    public init(
        device: String, regionID: String, kind: EventKind, time: Double, accuracy: Double? = nil,
        position: Position? = nil
    ) {
        precondition(kind == .enter || kind == .exit, "a device reports enters and exits only")
        self.device = device
        self.regionID = regionID
        self.kind = kind
        self.time = time
        self.accuracy = accuracy
        self.position = position
    }
}

extension DeterministicID {
    /// A device-reported event's id: device, region, kind, time (to the millisecond) and
    /// `device`, so a report never takes the id of the event the server computed for the same
    /// millisecond (which would make the stored one depend on which came first).
    public static func deviceEvent(device: String, region: String, kind: EventKind, time: Double) -> String {
        uuid(device, region, kind.rawValue, Timestamp.format(milliseconds: Timestamp.milliseconds(time)), "device")
    }
}

extension GeofenceEvent {
    /// A reported transition as an event flagged `device`. Its visit is worked out by the stay
    /// merge (``StayMerge``); until then it names the visit it would open.
    public init(_ transition: DeviceTransition) {
        self.init(
            MonitorEvent(
                kind: transition.kind, device: transition.device, regionID: transition.regionID,
                time: transition.time, flags: .device, visitEnteredAt: transition.time,
                position: transition.position))
        id = DeterministicID.deviceEvent(
            device: transition.device, region: transition.regionID, kind: transition.kind, time: transition.time)
    }
}
