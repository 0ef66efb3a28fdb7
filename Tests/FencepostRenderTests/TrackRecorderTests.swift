import FencepostCore
import FencepostRender
import Testing

/// A track for a map keeps bounded memory whatever the trace's length.
@Suite struct TrackRecorderTests {
    @Test func longTracksAreThinnedToTheBudget() {
        var recorder = TrackRecorder(device: "d", budget: 1_000, droppedBudget: 100)
        // 200,000 fixes a metre or so apart along a line, every tenth one dropped as a teleport.
        for step in 0..<200_000 {
            let fix = Fix(device: "d", time: Double(step), lat: 47 + Double(step) * 1e-5, lon: 8)
            if step % 10 == 0 { recorder.drop(fix, reason: .teleport) } else { recorder.accept(fix) }
        }
        let track = recorder.track
        #expect(track.points.count <= 1_001)
        #expect(track.points.count > 250, "thinned, not emptied")
        #expect(track.points.first?.time == 1)
        #expect(track.last?.time == 199_999, "the last fix is always kept")
        #expect(track.points.last == track.last)
        #expect(track.dropped.count <= 100 && track.dropped.count > 25)
        // Kept points stay in time order.
        #expect(zip(track.points, track.points.dropFirst()).allSatisfy { $0.time < $1.time })
    }

    @Test func shortTracksAreKeptWhole() {
        var recorder = TrackRecorder(device: "d")
        for step in 0..<500 {
            recorder.accept(Fix(device: "d", time: Double(step), lat: 47 + Double(step) * 1e-6, lon: 8))
        }
        recorder.drop(Fix(device: "d", time: 600, lat: 0, lon: 0), reason: .nullIsland)
        #expect(recorder.track.points.count == 500)
        #expect(recorder.track.dropped.isEmpty, "(0, 0) is no place the device was")
    }
}
