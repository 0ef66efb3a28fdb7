import FencepostCore
import FencepostGeometry
import FencepostRender
import Synchronization

/// Each device's recent track, kept in memory for the live page from the fixes the service
/// accepts: the store keeps no fixes. Posted fixes are run through the same fix filter as
/// ingest (its state kept here), so what the page draws is what the monitor saw; a restart
/// starts every track afresh (the last position still comes from the store).
///
/// Bounded: `pointsPerDevice` points per device, `maxDevices` devices (the least recently
/// moved are forgotten first). Every change takes a sequence number, so the page asks only
/// for what moved since its last look.
final class RecentTracks: Sendable {
    struct Track: Sendable {
        var points: [TrackPoint] = []
        var filter = FilterState()
        var seq: Int64 = 0
    }

    private struct State {
        var tracks: [String: Track] = [:]
        var seq: Int64 = 0
    }

    private let state = Mutex(State())
    let pointsPerDevice: Int
    let maxDevices: Int
    let filter: FixFilterSettings

    /// Metres a point must be from the one before to be kept beside it.
    static let spacing = 5.0

    /// At most 1,000 points of 24 bytes for each of 2,000 devices: under 50 MB however many
    /// devices post.
    init(pointsPerDevice: Int = 1_000, maxDevices: Int = 2_000, filter: FixFilterSettings = FixFilterSettings()) {
        self.pointsPerDevice = pointsPerDevice
        self.maxDevices = maxDevices
        self.filter = filter
    }

    /// Records a committed request's fixes (all of one device or several), in time order per
    /// device as the ingest took them.
    func record(_ fixes: [Fix]) {
        guard !fixes.isEmpty else { return }
        let settings = filter
        let limit = pointsPerDevice
        state.withLock { state in
            // The ingest processes a request's fixes in time order per device.
            let ordered = fixes.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(
                \.element)
            for fix in ordered {
                var track = state.tracks[fix.device] ?? Track()
                guard FixFilter.check(fix, state: &track.filter, anchorAtStart: nil, settings: settings) == nil else {
                    state.tracks[fix.device] = track
                    continue
                }
                let point = TrackPoint(lon: fix.lon, lat: fix.lat, time: fix.time)
                // A device standing still (a bus at a stop) would fill its track with one place:
                // a point within `spacing` metres of the one before replaces it.
                if track.points.count > 1, let previous = track.points.last,
                    Geodesy.distance(previous.position, point.position) < Self.spacing
                {
                    track.points[track.points.count - 1] = point
                } else {
                    track.points.append(point)
                }
                if track.points.count > limit { track.points.removeFirst(track.points.count - limit) }
                state.seq += 1
                track.seq = state.seq
                state.tracks[fix.device] = track
            }
            if state.tracks.count > maxDevices {
                let stalest = state.tracks.sorted { $0.value.seq < $1.value.seq }.prefix(
                    state.tracks.count - maxDevices)
                for (device, _) in stalest { state.tracks[device] = nil }
            }
        }
    }

    /// The tracks that changed after `seq` (all of them for 0) of the devices `included`
    /// accepts, and the sequence number to ask from next.
    func changes(after seq: Int64, where included: (String) -> Bool = { _ in true }) -> (
        seq: Int64, tracks: [(device: String, points: [TrackPoint])]
    ) {
        state.withLock { state in
            var changed: [(String, [TrackPoint])] = []
            for (name, track) in state.tracks
            where track.seq > seq && included(name) && !track.points.isEmpty {
                changed.append((name, track.points))
            }
            return (state.seq, changed.sorted { $0.0 < $1.0 })
        }
    }
}
