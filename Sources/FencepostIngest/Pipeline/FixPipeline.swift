package import FencepostCore

/// The path every fix takes after it is read, from any input: the time order per device
/// (``FixOrder``), the fix filter and the monitor, with each device's progress through them.
/// `ingest` and the service put a store around it (device states loaded and saved, events
/// written); `scan` and `render map --trace` use it on its own, in memory.
///
/// Each input (a file, a request) is put in time order per device; fixes at or before a
/// device's last fix of an earlier input are `already_seen`; an input that fails leaves the
/// devices as they were before it. Holds GEOS state through the monitor: one pipeline per thread.
package final class FixPipeline {
    package let monitor: Monitor
    private let filter: FixFilterSettings
    /// Every device's progress; see ``beginUndo()`` for undoing several inputs at once.
    private var devices = Devices()
    private var order: FixOrder

    package init(monitor: Monitor, filter: FixFilterSettings = FixFilterSettings(), sortRunFixes: Int = 250_000) {
        self.monitor = monitor
        self.filter = filter
        self.order = FixOrder(runFixes: sortRunFixes)
    }

    package convenience init(
        regions: [Region], roster: DeviceRoster = DeviceRoster(), monitor settings: MonitorSettings = MonitorSettings(),
        filter: FixFilterSettings = FixFilterSettings()
    ) throws {
        self.init(monitor: try Monitor(regions: regions, roster: roster, settings: settings), filter: filter)
    }

    package var regionCount: Int { monitor.regionCount }

    /// What one input held.
    package struct InputTally: Sendable {
        /// Fixes read, before the filter.
        package var fixes = 0
        /// The devices it had fixes of (their progress is what a store saves).
        package var devices: Set<String> = []
        /// What each of those devices' fixes did.
        package var byDevice: [String: DeviceTally] = [:]
    }

    /// How a device's progress is found at its first fix in an input: from the progress kept
    /// since its last input (nil for a device not seen yet), or from elsewhere (a store).
    package typealias Resume = (_ device: String, _ kept: DeviceProgress?) throws -> DeviceProgress

    /// Takes one input: `next` gives its fixes, nil at the end; `outcomes` is told what became of each,
    /// in the order the monitor takes them (time order per device). `resume` gives each device's
    /// progress at its first fix (by default what was kept, else a fresh one). If anything
    /// throws, the input counts for nothing: the devices are left as they were before it.
    @discardableResult
    package func input(
        _ next: () throws -> Fix?, into outcomes: inout some FixOutcomes, resume: Resume? = nil
    ) throws -> InputTally {
        let resume = resume ?? keptOrFresh
        return try undoingOnFailure { input in
            while let fix = try next() { try input.addTakingSettled(fix, resume: resume, into: &outcomes) }
            try finish(&input, resume: resume, into: &outcomes)
        }
    }

    /// ``input(_:into:resume:)`` for an input read in batches (`nextBatch` gives the next, nil
    /// at the end): no call per fix to get it.
    @discardableResult
    package func input(
        batches nextBatch: () throws -> [Fix]?, into outcomes: inout some FixOutcomes, resume: Resume? = nil
    ) throws -> InputTally {
        let resume = resume ?? keptOrFresh
        return try undoingOnFailure { input in
            while let batch = try nextBatch() {
                // Each fix read where it lies in the batch: iterating the array by value copied
                // every fix out once more (its device's name retained and released).
                try batch.withUnsafeBufferPointer { fixes in
                    for index in fixes.indices {
                        try input.addTakingSettled(fixes[index], resume: resume, into: &outcomes)
                    }
                }
            }
            try finish(&input, resume: resume, into: &outcomes)
        }
    }

    /// Runs `body` on a new input and ends it; if `body` throws, the devices go back to what
    /// they were before it (they moved into the input: see ``startInput()``).
    private func undoingOnFailure(_ body: (inout Input) throws -> Void) throws -> InputTally {
        let outer = devices.undo
        devices.undo = [:]
        var input = startInput()
        do {
            try body(&input)
        } catch {
            abandon(&input)
            rollBack()
            devices.undo = outer
            throw error
        }
        let tally = end(&input)
        // A caller's own record (``beginUndo()``) keeps what was there before its first change.
        if var outer, let inner = devices.undo {
            for (device, before) in inner where outer.index(forKey: device) == nil { outer[device] = before }
            devices.undo = outer
        } else {
            devices.undo = outer
        }
        return tally
    }

    /// The progress kept since the device's last input, else a fresh one.
    private var keptOrFresh: Resume {
        let monitor = self.monitor
        return { device, kept in kept ?? DeviceProgress(monitor: monitor, device: device) }
    }

    /// Takes the fixes still held when an input has no more.
    private func finish(_ input: inout Input, resume: Resume, into outcomes: inout some FixOutcomes) throws {
        try input.finish()
        while let settled = try input.next() { try input.take(settled, resume: resume, into: &outcomes) }
    }

    /// One input on its way through, for a caller that drives it (a store's session, which
    /// loads each device before its first fix is taken): ``add(_:)`` each fix, take every fix
    /// ``next()`` settles, ``finish()``, take the rest, then ``FixPipeline/end(_:)``. The
    /// devices' progress moves into the input and back at its end: a caller whose input fails
    /// gives them back (``FixPipeline/abandon(_:)``) and undoes what it did
    /// (``FixPipeline/rollBack()``).
    package struct Input {
        // The devices are worked on as a local value: no run-time exclusivity checks per fix.
        // The pipeline holds no second reference meanwhile, so a device's first fix in an
        // input does not copy every device's progress (a live service takes one request at a
        // time).
        fileprivate var devices: Devices
        fileprivate var order: FixOrder
        fileprivate var fixes = 0
        private let monitor: Monitor
        private let filter: FixFilterSettings

        fileprivate init(devices: Devices, order: FixOrder, monitor: Monitor, filter: FixFilterSettings) {
            self.devices = devices
            self.order = order
            self.monitor = monitor
            self.filter = filter
            self.devices.startInput()
            self.order.reset()
        }

        /// The input's next fix, as read.
        package mutating func add(_ fix: Fix) throws {
            fixes += 1
            try order.add(fix)
        }

        /// The input has no more fixes.
        package mutating func finish() throws {
            try order.finish()
        }

        /// The next fix whose time order is settled (nil: none until the next ``add(_:)``), to
        /// be taken before anything else is added.
        package mutating func next() throws -> Fix? {
            try order.next()
        }

        /// Whether `device`'s first fix in this input is yet to be taken: ``take(_:resume:into:)``
        /// will ask `resume` for its progress.
        package func isFirst(of device: String) -> Bool {
            devices.currentDevice != device && !devices.seenInInput.contains(device)
        }

        /// Adds a fix and takes every fix that settles. Once the input showed it is in order,
        /// the fix is taken as it comes, with no copy through the order.
        @inline(__always)
        mutating func addTakingSettled(_ fix: Fix, resume: Resume, into outcomes: inout some FixOutcomes) throws {
            if order.streamsWithNothingHeld {
                fixes += 1
                return try devices.take(fix, monitor: monitor, filter: filter, resume: resume, into: &outcomes)
            }
            try add(fix)
            while let settled = try next() { try take(settled, resume: resume, into: &outcomes) }
        }

        /// Filters and monitors a settled fix; `outcomes` is told what became of it.
        @inline(__always)
        package mutating func take(_ fix: Fix, resume: Resume, into outcomes: inout some FixOutcomes) throws {
            try devices.take(fix, monitor: monitor, filter: filter, resume: resume, into: &outcomes)
        }
    }

    /// An input to drive (``Input``), from the devices' progress as it is now; until it ends
    /// the pipeline holds none.
    package func startInput() -> Input {
        let taken = devices
        devices = Devices()
        return Input(devices: taken, order: order, monitor: monitor, filter: filter)
    }

    /// Keeps what `input` did to the devices (moved out of it: the input is spent); returns
    /// what it held.
    package func end(_ input: inout Input) -> InputTally {
        var devices = Devices()
        swap(&devices, &input.devices)
        devices.putCurrentBack()
        let byDevice = devices.takeTallies()
        self.devices = devices
        order.reset()
        return InputTally(fixes: input.fixes, devices: devices.seenInInput, byDevice: byDevice)
    }

    /// Takes back the devices from an input that failed part-way, with nothing of it tallied;
    /// ``rollBack()`` then undoes what it did to them.
    package func abandon(_ input: inout Input) {
        var devices = Devices()
        swap(&devices, &input.devices)
        devices.putCurrentBack()
        devices.emitted.removeAll(keepingCapacity: true)
        self.devices = devices
        order.reset()
    }

    /// From now on, each device's progress is kept as it was before its first change, so that
    /// ``rollBack()`` can put it back: the inputs of a store's transaction over several
    /// requests are undone together when it rolls back. Only the devices the inputs touch are
    /// kept (a copy of every device's progress per transaction would grow with the devices).
    package func beginUndo() {
        devices.undo = [:]
    }

    /// What changed since ``beginUndo()`` stays; nothing more is kept for undoing.
    package func commitUndo() {
        devices.undo = nil
    }

    /// Every device's progress back to what it was at ``beginUndo()``.
    package func rollBack() {
        devices.putCurrentBack()
        for (device, before) in devices.undo ?? [:] { devices.byID[device] = before }
        devices.undo = nil
    }

    /// Forgets every device's progress: each one's next fix resumes from the store.
    package func forgetAll() {
        devices = Devices()
    }

    /// A device's progress, nil for one not seen.
    package func progress(of device: String) -> DeviceProgress? {
        devices.byID[device]
    }

    /// Forgets a device's progress, between inputs: its next fix resumes from the store.
    package func forget(_ device: String) {
        devices.putCurrentBack()
        devices.keepForUndo(device)
        devices.byID[device] = nil
    }

    /// How many devices have progress kept.
    package var deviceCount: Int {
        guard let current = devices.current, devices.byID[current.device] == nil else { return devices.byID.count }
        return devices.byID.count + 1
    }

    /// Every device's progress, the current one's kept out of the dictionary while its fixes come.
    package struct Devices: Sendable {
        fileprivate var byID: [String: DeviceProgress] = [:]
        fileprivate var current: (device: String, progress: DeviceProgress)?
        /// The current device's name, compared with every fix's: reading it from `current`
        /// would copy the progress, and retain what it holds, once a fix.
        fileprivate private(set) var currentDevice: String?
        /// Devices seen in the current input: their anchor at its start decides what is already seen.
        fileprivate var seenInInput: Set<String> = []
        fileprivate var emitted: [MonitorEvent] = []
        /// While changes are kept for undoing (``FixPipeline/beginUndo()``): each changed
        /// device's progress before its first change (nil inside: it had none).
        fileprivate var undo: [String: DeviceProgress?]?

        package init() {}

        fileprivate mutating func startInput() {
            putCurrentBack()
            seenInInput.removeAll(keepingCapacity: true)
        }

        fileprivate mutating func putCurrentBack() {
            if let current { byID[current.device] = current.progress }
            current = nil
            currentDevice = nil
        }

        /// The tallies of the devices seen in the current input, each started over.
        fileprivate mutating func takeTallies() -> [String: DeviceTally] {
            var tallies: [String: DeviceTally] = [:]
            for device in seenInInput {
                tallies[device] = byID[device]?.tally
                byID[device]?.tally = DeviceTally()
            }
            return tallies
        }

        fileprivate mutating func take(
            _ fix: Fix, monitor: Monitor, filter: FixFilterSettings, resume: Resume,
            into outcomes: inout some FixOutcomes
        ) throws {
            if currentDevice != fix.device {
                // A new run of fixes: its device's name is checked once here, not per fix. A name
                // that cannot be kept (a NUL cut one short in the store, and the device lost its
                // anchor between runs) gets no state: its fixes are dropped.
                guard DeviceID.fileNameProblem(fix.device) == nil else {
                    return try outcomes.dropped(fix, reason: .badDevice)
                }
                try switchDevice(to: fix.device, resume: resume)
            }
            if let reason = try current!.progress.take(fix, monitor: monitor, filter: filter, into: &emitted) {
                return try outcomes.dropped(fix, reason: reason)
            }
            defer { if !emitted.isEmpty { emitted.removeAll(keepingCapacity: true) } }
            try outcomes.accepted(fix, events: emitted)
        }

        /// Keeps `device`'s progress for undoing, before its first change since undoing began.
        fileprivate mutating func keepForUndo(_ device: String) {
            guard undo != nil, undo!.index(forKey: device) == nil else { return }
            undo![device] = .some(byID[device])
        }

        private mutating func switchDevice(to device: String, resume: Resume) throws {
            putCurrentBack()
            keepForUndo(device)
            var progress: DeviceProgress
            if seenInInput.insert(device).inserted {
                progress = try resume(device, byID.removeValue(forKey: device))
                progress.anchorAtStart = progress.anchor
            } else {
                progress = byID.removeValue(forKey: device)!
            }
            current = (device, progress)
            currentDevice = device
        }
    }
}

/// What a ``FixPipeline`` tells about each fix it takes.
package protocol FixOutcomes {
    /// The fix passed the filter; `events` are those it completed, in the order the monitor
    /// emitted them (often none).
    mutating func accepted(_ fix: Fix, events: [MonitorEvent]) throws
    mutating func dropped(_ fix: Fix, reason: FixDropReason) throws
}

/// Every fix with what became of it, in the order the pipeline took them: for callers that want
/// the outcomes of a small input at once (tests, a few fixes in memory).
package struct FixOutcomeList: FixOutcomes {
    package enum Outcome: Sendable, Hashable {
        /// Passed the filter; the events it completed (with the ids ingest gives them).
        case accepted([GeofenceEvent])
        case dropped(FixDropReason)
    }

    package private(set) var items: [(fix: Fix, outcome: Outcome)] = []

    package init() {}

    package mutating func accepted(_ fix: Fix, events: [MonitorEvent]) {
        items.append((fix, .accepted(events.map(GeofenceEvent.init))))
    }

    package mutating func dropped(_ fix: Fix, reason: FixDropReason) {
        items.append((fix, .dropped(reason)))
    }
}

extension FixPipeline {
    /// Takes `fixes` as one input and returns what became of each.
    package func outcomes(of fixes: [Fix]) throws -> [(fix: Fix, outcome: FixOutcomeList.Outcome)] {
        var list = FixOutcomeList()
        var iterator = fixes.makeIterator()
        try input({ iterator.next() }, into: &list)
        return list.items
    }
}
