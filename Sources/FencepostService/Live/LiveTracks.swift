import FencepostCore
import FencepostGeometry
import FencepostRender
import FencepostStore
import Foundation

/// Each device's recent track for the live page, read from the stored history (the fixes the
/// monitor accepted, none inside a private region), so every instance of a cluster draws every
/// device, and a restart loses nothing. A store keeping no history (`history_days` 0) draws no
/// tracks; the page still shows each device's last position.
///
/// The page asks for what changed after a cursor: the time of its last answer, by the
/// answering instance's clock, compared with the time each device's state was saved, by the
/// saving instance's clock. A save is stamped before its commit, and several hosts' clocks
/// differ a little, so a device saved within ``settleMs`` before the cursor is sent again: a
/// page may draw a track twice, never miss one.
struct LiveTracks: Sendable {
    let store: Store

    /// The newest points of a track, at most.
    static let pointsPerDevice = 1_000
    /// Hours of history read back from a device's newest stored hour, at most.
    static let hours = 6
    /// Metres a point must be from the one before to be kept beside it: a device standing
    /// still (a bus at a stop) does not fill its track with one place.
    static let spacing = 5.0
    /// How far behind the cursor a save may still be news, in milliseconds: longer than a
    /// commit takes after its stamp, plus the skew of the instances' clocks.
    static let settleMs: Int64 = 2_000

    /// The tracks of the readable devices saved after `cursor` (every device for 0), the most
    /// recently saved `limit` of them, sorted by device; and the cursor to ask from next.
    func changes(after cursor: Int64, limit: Int = 2_000, where included: (String) -> Bool = { _ in true })
        async throws -> (cursor: Int64, tracks: [(device: String, points: [TrackPoint])])
    {
        let saved = try await store.devicesSaved(after: cursor - Self.settleMs)
        let next = max(cursor, Timestamp.milliseconds(Date().timeIntervalSince1970))
        var tracks: [(device: String, points: [TrackPoint])] = []
        for (device, _) in saved where included(device) {
            let points = try await track(of: device)
            if !points.isEmpty { tracks.append((device, points)) }
            if tracks.count == limit { break }
        }
        return (next, tracks.sorted { $0.device < $1.device })
    }

    /// The newest ``pointsPerDevice`` points of `device`'s stored fixes within ``hours`` of its
    /// newest, thinned to ``spacing``, in time order.
    func track(of device: String) async throws -> [TrackPoint] {
        var newestFirst: [[TrackPoint]] = []
        var count = 0
        try await store.newestHours(device: device, span: Self.hours) { fixes in
            let points = Self.thinned(fixes.lazy.map { TrackPoint(lon: $0.lon, lat: $0.lat, time: $0.time) })
            newestFirst.append(points)
            count += points.count
            return count < Self.pointsPerDevice
        }
        return Array(Self.thinned(newestFirst.reversed().joined()).suffix(Self.pointsPerDevice))
    }

    /// `points` (in time order), a point within ``spacing`` metres of the one before replacing
    /// it.
    static func thinned(_ points: some Sequence<TrackPoint>) -> [TrackPoint] {
        var kept: [TrackPoint] = []
        for point in points {
            if kept.count > 1, Geodesy.distance(kept[kept.count - 1].position, point.position) < spacing {
                kept[kept.count - 1] = point
            } else {
                kept.append(point)
            }
        }
        return kept
    }
}
