public import FencepostCore
import FencepostGeometry
import Foundation
import GRDB

/// Options for one ingest run.
public struct IngestOptions: Sendable {
    public var monitor: MonitorSettings
    public var filter: FixFilterSettings
    /// The most fixes of one unsorted input sorted in memory.
    public var maxUnsortedFixes: Int

    public init(monitor: MonitorSettings = MonitorSettings(), filter: FixFilterSettings = FixFilterSettings(), maxUnsortedFixes: Int = 2_000_000) {
        self.monitor = monitor
        self.filter = filter
        self.maxUnsortedFixes = maxUnsortedFixes
    }
}

/// What an ingest did.
public struct IngestSummary: Sendable, Hashable {
    public var fixesRead = 0
    public var fixesAccepted = 0
    public var dropped: [FixDropReason: Int] = [:]
    public var skipped: [String: Int] = [:]
    public var events: [EventKind: Int] = [:]
    public var visitsOpened = 0
    public var visitsClosed = 0
    public var devices: Set<String> = []

    public init() {}
}

/// The path every fix takes, from any input: filter → monitor → visit tracker → store.
///
/// Each input (a file, a request) is one unit: its events, visit changes, outbox rows and the
/// devices' anchors and states commit in one transaction when it ends, so a malformed input
/// writes nothing, a crash loses nothing, and re-running converges (fixes at or before a
/// device's anchor are skipped). Fixes of one input are processed in time order: an input that
/// arrives sorted streams through; one that does not is sorted in memory first (up to
/// `maxUnsortedFixes`). Not thread-safe: one session per ingest.
public final class IngestSession {
    private let store: Store
    private let options: IngestOptions
    private let monitor: Monitor
    private var devices: [String: DeviceRecord] = [:]
    private var pendingEvents: [GeofenceEvent] = []
    /// The summary of committed inputs, and of the current one while it is read.
    public private(set) var summary = IngestSummary()
    private var committedSummary = IngestSummary()

    /// The input being read: its fixes wait here until they are known to be in order.
    private var inputBuffer: [Fix] = []
    private var inputSorted = true
    private var streaming = false
    private static let sortWindow = 50_000

    /// A class: the per-fix path mutates it in place rather than copying its state.
    private final class DeviceRecord {
        var state: DeviceState
        var cache = MonitorCache()
        var anchorAtStart: Double?
        var inputGeneration: Int
        var dirty = false

        init(state: DeviceState, inputGeneration: Int) {
            self.state = state
            self.anchorAtStart = state.anchor
            self.inputGeneration = inputGeneration
        }
    }
    /// The device of the previous fix: most inputs hold one device.
    private var lastRecord: (device: String, record: DeviceRecord)?
    private var inputGeneration = 0

    public init(store: Store, options: IngestOptions = IngestOptions()) throws {
        self.store = store
        self.options = options
        let regions = try store.monitoredRegions().map(\.region)
        self.monitor = try Monitor(regions: regions, settings: options.monitor)
    }

    public var regionCount: Int { monitor.regionCount }

    // MARK: - Inputs

    /// Starts a new input (a file, a request): fixes before it are already in the store's past.
    public func beginInput() {
        inputGeneration += 1
        inputBuffer.removeAll(keepingCapacity: true)
        inputSorted = true
        streaming = false
    }

    /// Adds one fix of the current input.
    public func add(_ fix: Fix) throws {
        summary.fixesRead += 1
        if streaming {
            try process(fix)
            return
        }
        if let last = inputBuffer.last, fix.time < last.time { inputSorted = false }
        inputBuffer.append(fix)
        if inputSorted, inputBuffer.count >= Self.sortWindow {
            // Sorted so far: stream the rest; a late straggler is dropped as out of order.
            streaming = true
            try drainInputBuffer()
        } else if !inputSorted, inputBuffer.count > options.maxUnsortedFixes {
            throw IngestError.unsortedInputTooLarge(limit: options.maxUnsortedFixes)
        }
    }

    /// Records readers' skipped-record counts.
    public func addSkipped(_ skipped: [String: Int]) {
        summary.skipped.merge(skipped, uniquingKeysWith: +)
    }

    /// Ends the current input: processes what it buffered and commits it.
    public func endInput() throws {
        if !inputSorted {
            inputBuffer.sort { $0.time < $1.time }
        }
        try drainInputBuffer()
        try commit()
        committedSummary = summary
    }

    /// Forgets everything of the current input: it was malformed, and nothing of it is written.
    public func abandonInput() {
        inputBuffer.removeAll(keepingCapacity: true)
        pendingEvents.removeAll(keepingCapacity: true)
        // Devices this input touched reload their committed state when next seen.
        devices = devices.filter { !$0.value.dirty }
        lastRecord = nil
        summary = committedSummary
    }

    private func drainInputBuffer() throws {
        for fix in inputBuffer { try process(fix) }
        inputBuffer.removeAll(keepingCapacity: true)
    }

    // MARK: - Processing

    private func process(_ fix: Fix) throws {
        let record = try deviceRecord(fix.device)
        record.dirty = true
        if let reason = FixFilter.check(fix, state: &record.state.filter, anchorAtStart: record.anchorAtStart, settings: options.filter) {
            summary.dropped[reason, default: 0] += 1
            return
        }
        summary.fixesAccepted += 1
        try monitor.process(fix, state: &record.state.monitor, cache: &record.cache) { event in
            pendingEvents.append(GeofenceEvent(event))
        }
        record.state.anchor = fix.time
    }

    private func deviceRecord(_ device: String) throws -> DeviceRecord {
        let record: DeviceRecord
        if let last = lastRecord, last.device == device {
            record = last.record
        } else if let known = devices[device] {
            record = known
        } else {
            let stored = try store.writer.read { db in try Store.deviceState(device, db: db) }
            record = DeviceRecord(state: stored ?? DeviceState(), inputGeneration: inputGeneration)
            devices[device] = record
            summary.devices.insert(device)
        }
        if record.inputGeneration != inputGeneration {
            record.inputGeneration = inputGeneration
            record.anchorAtStart = record.state.anchor
        }
        lastRecord = (device, record)
        return record
    }

    /// One transaction: the batch's events, visit changes, outbox rows and device states.
    private func commit() throws {
        let dirty = devices.filter(\.value.dirty)
        guard !pendingEvents.isEmpty || !dirty.isEmpty else { return }
        let events = pendingEvents
        let now = Timestamp.format(Date())
        let (opened, closed) = try store.writer.write { db -> (Int, Int) in
            var opened = 0, closed = 0
            for event in events {
                _ = try Store.insert(event, now: now, db: db)
                let change = VisitChange(for: event)
                if try Store.apply(change, now: now, db: db) {
                    if case .open = change { opened += 1 } else { closed += 1 }
                }
            }
            for (device, record) in dirty {
                try Store.save(device: device, state: record.state, now: now, db: db)
            }
            return (opened, closed)
        }
        for event in events { summary.events[event.kind, default: 0] += 1 }
        summary.visitsOpened += opened
        summary.visitsClosed += closed
        for device in dirty.keys { devices[device]?.dirty = false }
        pendingEvents.removeAll(keepingCapacity: true)
    }
}

/// Why an ingest stopped.
public enum IngestError: Error, Equatable, CustomStringConvertible {
    case unsortedInputTooLarge(limit: Int)

    public var description: String {
        switch self {
        case .unsortedInputTooLarge(let limit):
            return "the input is not in time order and has more than \(limit) fixes; sort it by time first"
        }
    }
}
