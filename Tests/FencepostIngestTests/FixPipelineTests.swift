import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostIngest
import Testing

/// The in-memory filter → monitor path: the filter's drops, and the monitor's events with the
/// ids ingest gives them.
@Suite struct FixPipelineTests {
    static let home = Region(id: "home", shape: .circle(center: Position(lon: 8.0, lat: 47.0), radius: 100))

    @Test func filtersThenMonitors() throws {
        let pipeline = try FixPipeline(
            regions: [Self.home],
            monitor: MonitorSettings(hysteresis: 0, enterDelay: 0, exitDelay: 0, passThrough: false))
        let walk = (0...12).map {
            Fix(device: "d", time: 1_000 + Double($0) * 60, lat: 46.9946 + Double($0) * 0.0009, lon: 8.0, accuracy: 5)
        }
        var fixes: [Fix] = []
        for (index, fix) in walk.enumerated() {
            fixes.append(fix)
            if index == 3 { fixes.append(fix) }  // the same time again
        }
        fixes.append(Fix(device: "d", time: 2_000, lat: 0, lon: 0))
        var dropped: [FixDropReason] = []
        var events: [GeofenceEvent] = []
        for (_, outcome) in try pipeline.outcomes(of: fixes) {
            switch outcome {
            case .accepted(let new): events += new
            case .dropped(let reason): dropped.append(reason)
            }
        }
        #expect(dropped == [.duplicateTime, .nullIsland])
        #expect(events.map(\.kind) == [.enter, .exit])
        // The reference: plain containment, fix by fix.
        let inside = walk.filter { Geodesy.distance($0.position, Position(lon: 8.0, lat: 47.0)) <= 100 }
        #expect(events.first?.time ?? 0 < inside.first!.time && events.last?.time ?? 0 > inside.last!.time)
        #expect(
            events.first?.id
                == DeterministicID.event(device: "d", region: "home", kind: .enter, time: events.first!.time))
    }

    @Test func devicesAreIndependent() throws {
        let pipeline = try FixPipeline(regions: [Self.home])
        let outcomes = try pipeline.outcomes(of: [
            Fix(device: "a", time: 10, lat: 47.0, lon: 8.0, accuracy: 5),
            Fix(device: "b", time: 5, lat: 47.0, lon: 8.0, accuracy: 5),
        ])
        guard outcomes.count == 2, case .accepted(let first) = outcomes[0].outcome,
            case .accepted(let second) = outcomes[1].outcome
        else {
            Issue.record("an earlier time on another device is not out of order")
            return
        }
        #expect(first.map(\.device) == ["a"] && second.map(\.device) == ["b"])
    }
}
