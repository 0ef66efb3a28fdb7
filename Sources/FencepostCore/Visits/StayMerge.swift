/// The visits of one device in one region, worked out from every enter and exit known for
/// them, the server's (computed from fixes) and the device's own (``DeviceTransition``): one
/// visit per stay, whichever side saw it first.
///
/// The rule, taking the enters and exits in time order:
/// - an enter while a stay is open joins it (the other side's report of the same stay);
/// - an enter with no stay open joins the last stay when that stay has nothing yet from the
///   enter's side and began at most ``window`` seconds before it (the late report of a stay
///   the other side already opened and closed); otherwise it opens a new stay;
/// - an exit closes the open stay (the first exit of either side ends it); with no stay open
///   it joins the last stay, changing nothing; with no stay at all it belongs to no visit;
/// - a stay's visit is identified by its first enter (``DeterministicID/visit(device:region:enteredAt:)``);
/// - any other event (dwell, overstay, overspeed) belongs to the last stay begun at or before it.
///
/// The result is a function of the set of events, not of the order they arrived in: the same
/// reports in any order give the same visits. With the server's events alone (which alternate
/// enter, exit) it gives exactly the visits the tracker gives.
public struct StayMerge: Sendable {
    /// Seconds within which a late enter still belongs to the stay the other side saw begin.
    public var window: Double

    /// Five minutes: iOS reports region entries and exits 3–5 minutes after the crossing (and
    /// Android's geofencing, batched for battery, within about 2), so a device's enter for a stay
    /// the server saw begin arrives stamped up to that much later.
    public static let defaultWindow: Double = 300

    public init(window: Double = StayMerge.defaultWindow) {
        self.window = window
    }

    /// One input: an event of the device in the region, or a visit's closing that no exit event
    /// records (a region removed, changed or unassigned).
    public struct Input: Sendable, Hashable {
        /// The event's id; nil for a closing without an event.
        public var eventID: String?
        public var kind: EventKind
        public var time: Double
        public var fromDevice: Bool
        /// Why the visit ends, for an exit or a closing.
        public var reason: VisitExitReason

        public init(eventID: String?, kind: EventKind, time: Double, fromDevice: Bool, reason: VisitExitReason = .exit)
        {
            self.eventID = eventID
            self.kind = kind
            self.time = time
            self.fromDevice = fromDevice
            self.reason = reason
        }
    }

    /// The visits, in order, and each event's visit (nil: none).
    public struct Result: Sendable, Hashable {
        public var visits: [Visit] = []
        public var visitOfEvent: [String: String?] = [:]
    }

    /// The stays of `device` in `region`, from `inputs` in any order.
    public func merge(_ inputs: [Input], device: String, region: String) -> Result {
        var result = Result()
        var last: OpenStay?
        for input in inputs.sorted(by: Self.timeOrder) {
            let milliseconds = Timestamp.milliseconds(input.time)
            switch input.kind {
            case .enter:
                if var stay = last,
                    stay.isOpen
                        || (!stay.sides.contains(input.fromDevice)
                            && Double(milliseconds - stay.enteredMs) <= window * 1000)
                {
                    stay.sides.insert(input.fromDevice)
                    last = stay
                } else {
                    if let stay = last { result.visits.append(stay.visit) }
                    last = OpenStay(
                        visit: Visit(
                            id: DeterministicID.visit(device: device, region: region, enteredAt: input.time),
                            device: device, regionID: region, enteredAt: input.time),
                        enteredMs: milliseconds, sides: [input.fromDevice])
                }
            case .exit:
                if var stay = last {
                    if stay.isOpen {
                        stay.visit.exitedAt = input.time
                        stay.visit.exitReason = input.reason
                    }
                    if input.eventID != nil { stay.sides.insert(input.fromDevice) }
                    last = stay
                }
            case .dwell, .overstay, .absent, .overspeed:
                break
            }
            if let id = input.eventID { result.visitOfEvent[id] = .some(last?.visit.id) }
        }
        if let stay = last { result.visits.append(stay.visit) }
        for input in inputs where input.eventID != nil && ![.enter, .exit].contains(input.kind) {
            let milliseconds = Timestamp.milliseconds(input.time)
            let stay = result.visits.last { Timestamp.milliseconds($0.enteredAt) <= milliseconds }
            result.visitOfEvent[input.eventID ?? ""] = .some(stay?.id)
        }
        return result
    }

    /// Time to the millisecond, then enters before exits before the rest, the server's before
    /// the device's, then the id: a total order, so the arrival order never matters.
    private static func timeOrder(_ a: Input, _ b: Input) -> Bool {
        let (left, right) = (Timestamp.milliseconds(a.time), Timestamp.milliseconds(b.time))
        if left != right { return left < right }
        if rank(a.kind) != rank(b.kind) { return rank(a.kind) < rank(b.kind) }
        if a.fromDevice != b.fromDevice { return !a.fromDevice }
        return (a.eventID ?? "") < (b.eventID ?? "")
    }

    private static func rank(_ kind: EventKind) -> Int {
        switch kind {
        case .enter: 0
        case .exit: 1
        default: 2
        }
    }

    /// The stay being built: its visit, and which sides (device or server) reported it.
    private struct OpenStay {
        var visit: Visit
        var enteredMs: Int64
        var sides: Set<Bool>
        var isOpen: Bool { visit.exitedAt == nil }
    }
}
