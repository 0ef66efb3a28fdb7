package import FencepostCore
package import FencepostFormats
package import Foundation

/// What `scan` writes: events or visits, in one of the export formats.
package struct ScanOutput: Sendable {
    package enum Content: Sendable { case events, visits, stops, trips }

    package var content: Content
    /// csv, jsonl or geojson (ics is the store's: it needs the devices' last fixes; stops are
    /// the exception).
    package var format: ExportFormat
    /// Adds local times to csv and jsonl events.
    package var zone: TimeZone?
    /// How stops and trips are found, for those contents.
    package var movement: MovementSettings

    package init(
        content: Content = .events, format: ExportFormat = .csv, zone: TimeZone? = nil,
        movement: MovementSettings = MovementSettings()
    ) {
        precondition(format != .ics || content == .stops, "scan writes csv, jsonl or geojson (and ics for stops)")
        self.content = content
        self.format = format
        self.zone = zone
        self.movement = movement
    }
}

/// The monitor's events and visits for trace inputs, with no store: the same filter, time order
/// and monitor as an ingest into a fresh store, so the same events and visits with the same ids,
/// written as the store's exports would list them (events by time, then id; visits by enter
/// time, then id).
///
/// Fixes stream; events and visits wait in a ``SortedSpool`` (in memory, past its limit in
/// temporary files) and are written once every input has been read: an exit is often confirmed
/// long after the time it carries, and a later input may hold earlier times. Like an ingest, an
/// input that turns out malformed counts for nothing (its events, and the devices' progress
/// through it, are forgotten); the other inputs still count. Not thread-safe.
package final class TraceScan {
    private let pipeline: FixPipeline
    private var tally: ScanTally
    private var input = 0

    package init(
        regions: [Region], roster: DeviceRoster = DeviceRoster(), monitor settings: MonitorSettings,
        filter: FixFilterSettings, output: ScanOutput
    ) throws {
        self.pipeline = try FixPipeline(regions: regions, roster: roster, monitor: settings, filter: filter)
        self.tally = ScanTally(
            output: output, regions: Dictionary(regions.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }))
    }

    package var regionCount: Int { pipeline.regionCount }

    package var summary: IngestSummary { tally.summary }

    /// Scans one input: `nextBatch` gives its fixes a batch at a time, nil at the end. If it
    /// throws (a malformed file), nothing of the input counts and the error is rethrown.
    package func scan(batches nextBatch: () throws -> [Fix]?) throws {
        input += 1
        // Worked on as a local value and kept only if the input succeeds.
        var tally = self.tally
        tally.input = input
        do {
            let read: FixPipeline.InputTally
            if tally.takesFixes {
                read = try pipeline.input(batches: nextBatch, into: &tally)
            } else {
                (read, tally) = try handingEvents(nextBatch, to: tally)
            }
            tally.summary.fixesRead += read.fixes
            tally.summary.devices.formUnion(read.devices)
            for (device, counts) in read.byDevice { tally.summary.add(counts, device: device) }
        } catch {
            tally.events.discard(input: input)
            tally.visits.discard(input: input)
            throw error
        }
        self.tally = tally
    }

    /// Monitors one input here while its events are made into rows on a thread of their own;
    /// returns what the input held and the tally with its events. The thread is done with the
    /// tally when this returns or throws.
    private func handingEvents(_ nextBatch: () throws -> [Fix]?, to tally: ScanTally) throws
        -> (FixPipeline.InputTally, ScanTally)
    {
        let thread = ScanEventThread(tally: tally)
        var outcomes = HandedOutcomes(thread: thread)
        let read: FixPipeline.InputTally
        do {
            read = try pipeline.input(batches: nextBatch, into: &outcomes)
            outcomes.flush()
        } catch {
            _ = try? thread.finish()
            throw error
        }
        var tally = try thread.finish()
        tally.summary.fixesAccepted += outcomes.fixesAccepted
        tally.summary.dropped.merge(outcomes.dropped, uniquingKeysWith: +)
        return (read, tally)
    }

    /// Records readers' skipped-record counts.
    package func addSkipped(_ skipped: [String: Int]) {
        tally.summary.skipped.merge(skipped, uniquingKeysWith: +)
    }

    /// Writes what the inputs gave, in order: visits still open at the end are written open.
    package func finish(to sink: inout some TextSink) throws {
        try tally.finish(to: &sink, input: input + 1)  // the open visits belong to no input that may have been refused
    }
}
