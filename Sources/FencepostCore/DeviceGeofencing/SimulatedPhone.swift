public import FencepostGeometry

/// How a phone chooses the regions its OS monitors.
public enum PhonePolicy: String, Sendable, CaseIterable {
    /// ``MonitoredSetPlanner``: budget − 1 regions and a re-plan circle; asks again on leaving it.
    case fencepost
    /// The nearest budget − 1 regions, chosen again on each significant location change (iOS
    /// reports one after about 500 m, at most every 5 minutes): what SDKs that watch "the
    /// nearest 19" do.
    case nearest
    /// The first `budget` regions by id, never changed: what an app that ignores the budget
    /// ends up with (the OS refuses the rest).
    case firstByID = "first-n"
}

/// A phone's OS geofencing, replayed over a device's fixes: it monitors the circles its policy
/// picked, sees a monitored circle entered at the first fix inside it and left at the first fix
/// outside, and delivers a stay only when the device stayed inside at least `delay` seconds
/// (iOS's 3–5 minutes on a real phone; its own re-plan requests wait the same delay). A region
/// added while the device is inside counts as entered then (iOS's `requestState`).
public struct SimulatedPhone: Sendable {
    public let policy: PhonePolicy
    public let budget: Int
    public let delay: Double
    private let candidates: [MonitoredSetPlanner.Candidate]
    private let planner = MonitoredSetPlanner()

    private var monitored: [String: OSCircle] = [:]
    private var replan: ReplanCircle?
    private var lastSync: (position: Position, time: Double)?
    private var replanDue: Double?
    private var insideSince: [String: Double] = [:]
    private var monitoredSince: [String: Double] = [:]
    private var planned = false
    /// The last position seen, for the speed the re-plan circle's margin needs.
    private var previous: (position: Position, time: Double)?

    /// Stays the OS delivered, per region.
    public private(set) var stays: [String: [ClosedRange<Double>]] = [:]
    /// When each region was monitored.
    public private(set) var monitoredPeriods: [String: [ClosedRange<Double>]] = [:]
    /// Plans after the first: each a wake-up and a request.
    public private(set) var replans = 0

    public init(
        policy: PhonePolicy, budget: Int, delay: Double, candidates: [MonitoredSetPlanner.Candidate]
    ) {
        self.policy = policy
        self.budget = budget
        self.delay = delay
        self.candidates = candidates
    }

    /// The device is at `position` at `time` (fixes in time order).
    public mutating func observe(_ position: Position, at time: Double) {
        if !planned {
            plan(at: position, time: time)
            planned = true
        } else if replanDue == nil, wantsReplan(at: position, time: time) {
            replanDue = time + delay
        }
        if let due = replanDue, time >= due {
            replanDue = nil
            replans += 1
            plan(at: position, time: time)
        }
        defer { previous = (position, time) }
        for (id, circle) in monitored {
            let inside = circle.distanceToEdge(from: position) <= 0
            if inside, insideSince[id] == nil {
                insideSince[id] = time
            } else if !inside, let since = insideSince.removeValue(forKey: id) {
                leave(id, since: since, at: time)
            }
        }
    }

    /// The end of the trace: what is open closes.
    public mutating func finish(at time: Double) {
        for (id, since) in insideSince { leave(id, since: since, at: time) }
        insideSince.removeAll()
        for (id, since) in monitoredSince { monitoredPeriods[id, default: []].append(since...max(since, time)) }
        monitoredSince.removeAll()
    }

    private func wantsReplan(at position: Position, time: Double) -> Bool {
        switch policy {
        case .fencepost:
            guard let replan else { return false }
            return Geodesy.distance(position, replan.center) >= replan.radius
        case .nearest:
            guard let lastSync else { return true }
            return Geodesy.distance(position, lastSync.position) >= 500 && time - lastSync.time >= 300
        case .firstByID:
            return false
        }
    }

    private mutating func plan(at position: Position, time: Double) {
        let chosen: [MonitoredSetPlanner.Candidate]
        switch policy {
        case .fencepost:
            // The margin: how far the device goes at its current speed while the OS reports
            // the re-plan exit (the phone's own speed reading, on a real phone).
            var speed = 0.0
            if let previous, time > previous.time, time - previous.time <= 600 {
                speed = Geodesy.distance(position, previous.position) / (time - previous.time)
            }
            let plan = planner.plan(
                candidates, at: position, budget: budget, have: Array(monitored.keys), margin: speed * delay)
            let ids = Set(plan.regions.map(\.id))
            chosen = candidates.filter { ids.contains($0.id) }
            replan = plan.replan
        case .nearest:
            chosen = Array(
                candidates.sorted {
                    ($0.circle.distanceToEdge(from: position), $0.id) < (
                        $1.circle.distanceToEdge(from: position), $1.id
                    )
                }
                .prefix(max(budget - 1, 1)))
            lastSync = (position, time)
        case .firstByID:
            chosen = Array(candidates.sorted { $0.id < $1.id }.prefix(budget))
        }
        let next = Dictionary(chosen.map { ($0.id, $0.circle) }, uniquingKeysWith: { first, _ in first })
        for id in monitored.keys where next[id] == nil {
            if let since = insideSince.removeValue(forKey: id) { leave(id, since: since, at: time) }
            if let since = monitoredSince.removeValue(forKey: id) {
                monitoredPeriods[id, default: []].append(since...time)
            }
        }
        for id in next.keys where monitored[id] == nil { monitoredSince[id] = time }
        monitored = next
    }

    private mutating func leave(_ id: String, since: Double, at time: Double) {
        if time - since >= delay { stays[id, default: []].append(since...time) }
    }
}
