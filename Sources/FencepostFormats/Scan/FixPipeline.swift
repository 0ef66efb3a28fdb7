public import FencepostCore

/// The filter, the time order and the monitor for fixes held in memory, with no store: what
/// ingest does to each fix of an input (a file), without the visit writes, the outbox or a
/// device's anchor outliving the process. For commands that print or show what traces would do
/// (`scan`, `render map --trace`). Events carry the ids ingest into a fresh store gives them.
///
/// As in ingest, each input is put in time order per device (``FixOrder``), fixes at or before
/// a device's last one in an earlier input are `already_seen`, and an input that fails (a
/// malformed file) leaves the devices as they were before it. Holds GEOS state through the
/// monitor: one pipeline per thread.
public final class FixPipeline {
    private let monitor: Monitor
    private let filter: FixFilterSettings
    private var devices = Devices()
    private var order = FixOrder()

    public init(regions: [Region], monitor settings: MonitorSettings = MonitorSettings(), filter: FixFilterSettings = FixFilterSettings()) throws {
        self.monitor = try Monitor(regions: regions, settings: settings)
        self.filter = filter
    }

    public var regionCount: Int { monitor.regionCount }

    /// What one input held.
    public struct InputTally: Sendable {
        /// Fixes read, before the filter.
        public var fixes = 0
        public var devices: Set<String> = []
        /// What each device's fixes did.
        public var byDevice: [String: DeviceTally] = [:]
    }

    /// Takes one input: `read` hands each fix to `add`; `outcomes` is told what became of each,
    /// in the order the monitor takes them (time order per device). If `read` or `outcomes`
    /// throws, the input counts for nothing: the devices are left as they were before it.
    @discardableResult
    public func input(
        _ read: (_ add: (Fix) throws -> Void) throws -> Void, into outcomes: inout some FixOutcomes
    ) throws -> InputTally {
        // The devices are worked on as a local value: no run-time exclusivity checks per fix,
        // and a failed input is undone by not keeping it.
        var devices = self.devices
        var order = self.order
        defer {
            order.reset()
            self.order = order
        }
        devices.startInput()
        var fixes = 0
        let (monitor, filter) = (self.monitor, self.filter)
        try read { fix in
            fixes += 1
            try order.add(fix) { try devices.take($0, monitor: monitor, filter: filter, into: &outcomes) }
        }
        try order.finish { try devices.take($0, monitor: monitor, filter: filter, into: &outcomes) }
        let byDevice = devices.takeTallies()
        self.devices = devices
        return InputTally(fixes: fixes, devices: devices.seenInInput, byDevice: byDevice)
    }

    /// Every device's progress, the current one's kept out of the dictionary while its fixes come.
    private struct Devices {
        var byID: [String: DeviceProgress] = [:]
        var current: (device: String, progress: DeviceProgress)?
        /// Devices seen in the current input: their anchor at its start decides what is already seen.
        var seenInInput: Set<String> = []
        var emitted: [MonitorEvent] = []

        mutating func startInput() {
            if let current { byID[current.device] = current.progress }
            current = nil
            seenInInput.removeAll(keepingCapacity: true)
        }

        mutating func take(_ fix: Fix, monitor: Monitor, filter: FixFilterSettings, into outcomes: inout some FixOutcomes) throws {
            if current?.device != fix.device { switchDevice(to: fix.device, monitor: monitor) }
            if let reason = try monitor.take(fix, device: &current!.progress, filter: filter, emit: { emitted.append($0) }) {
                return try outcomes.dropped(fix, reason: reason)
            }
            guard !emitted.isEmpty else { return try outcomes.accepted(fix, events: []) }
            defer { emitted.removeAll(keepingCapacity: true) }
            try outcomes.accepted(fix, events: emitted.map(GeofenceEvent.init))
        }

        /// The tallies of the devices seen in the current input, each started over.
        mutating func takeTallies() -> [String: DeviceTally] {
            if let current { byID[current.device] = current.progress }
            current = nil
            var tallies: [String: DeviceTally] = [:]
            for device in seenInInput {
                tallies[device] = byID[device]?.tally
                byID[device]?.tally = DeviceTally()
            }
            return tallies
        }

        private mutating func switchDevice(to device: String, monitor: Monitor) {
            if let current { byID[current.device] = current.progress }
            var progress = byID.removeValue(forKey: device) ?? DeviceProgress(monitor: monitor)
            if seenInInput.insert(device).inserted { progress.anchorAtStart = progress.anchor }
            current = (device, progress)
        }
    }
}

/// What a ``FixPipeline`` tells about each fix it takes.
public protocol FixOutcomes {
    /// The fix passed the filter; `events` are those it completed, in the order the monitor
    /// emitted them.
    mutating func accepted(_ fix: Fix, events: [GeofenceEvent]) throws
    mutating func dropped(_ fix: Fix, reason: FixDropReason) throws
}

/// Every fix with what became of it, in the order the pipeline took them: for callers that want
/// the outcomes of a small input at once (tests, a few fixes in memory).
public struct FixOutcomeList: FixOutcomes {
    public enum Outcome: Sendable, Hashable {
        /// Passed the filter; the events it completed, in the order the monitor emitted them.
        case accepted([GeofenceEvent])
        case dropped(FixDropReason)
    }

    public private(set) var items: [(fix: Fix, outcome: Outcome)] = []

    public init() {}

    public mutating func accepted(_ fix: Fix, events: [GeofenceEvent]) {
        items.append((fix, .accepted(events)))
    }

    public mutating func dropped(_ fix: Fix, reason: FixDropReason) {
        items.append((fix, .dropped(reason)))
    }
}

extension FixPipeline {
    /// Takes `fixes` as one input and returns what became of each.
    public func outcomes(of fixes: [Fix]) throws -> [(fix: Fix, outcome: FixOutcomeList.Outcome)] {
        var list = FixOutcomeList()
        try input({ add in for fix in fixes { try add(fix) } }, into: &list)
        return list.items
    }
}
