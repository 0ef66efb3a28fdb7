import FencepostCore
import FencepostFormats
import FencepostStore

/// Device-reported transitions, from any route (`POST /v1/devices/{id}/transitions`, OwnTracks
/// over HTTP and MQTT): their regions looked up, then written with the stay merge in one
/// transaction (``Store/write(_:window:)``), on disk before the answer, and streams and
/// webhooks woken. A report for OwnTracks' re-plan circle is no region's and is skipped.
struct TransitionRecorder: Sendable {
    let store: Store
    let planning: PlanningRegions
    let durability: StoreDurability
    let signal: ChangeSignal
    /// Seconds within which the device's enter and the server's are one (``StayMerge/window``).
    let window: Double

    /// Writes `reported` for `device`; returns the events as stored. An unknown region refuses
    /// them all (``TransitionRefusal``), nothing written.
    func record(_ reported: [ReportedTransition], device: String) async throws -> [EventRow] {
        var transitions: [DeviceTransition] = []
        for report in reported {
            switch try await planning.region(named: report.region) {
            case .region(let id): transitions.append(report.resolved(device: device, regionID: id))
            case .replan: continue
            case .unknown(let name): throw TransitionRefusal.unknownRegion(index: report.index, region: name)
            }
        }
        guard !transitions.isEmpty else { return [] }
        let events = try await store.write(transitions, window: window)
        try await durability.commitsDurable()
        signal.notify()
        return events
    }
}
