import FencepostCore
import FencepostIngest
import FencepostStore
import Foundation

/// The ingest summary, for people (stderr) and scripts (JSON).
enum IngestReport {
    /// Devices listed one a line in the summary for people; `--json` lists them all.
    static let listedDevices = 20

    /// What `ingest` says when the store monitors no region: every fix is still filtered and
    /// anchored, but no event can come of it.
    static let noRegionsNote =
        "note: no region is monitored, so these fixes make no events; add regions with `fencepost regions apply PATH --backfill SINCE` (a GeoJSON file or a folder of them; --backfill derives the events of the fixes stored since then, these included)"

    static func lines(_ summary: IngestSummary, regions: Int) -> [String] {
        let dropped = summary.dropped.values.reduce(0, +)
        let skipped = summary.skipped.values.reduce(0, +)
        var lines = [
            "fixes: \(summary.fixesRead) read, \(summary.fixesAccepted) accepted, \(dropped) dropped, \(skipped) records skipped"
                + " (\(summary.devices.count) device\(summary.devices.count == 1 ? "" : "s"), \(regions) regions)"
        ]
        if dropped > 0 {
            lines.append(
                "dropped: "
                    + summary.dropped.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                        "\($0.key.rawValue) \($0.value)"
                    }.joined(separator: ", "))
        }
        if skipped > 0 {
            lines.append(
                "skipped: "
                    + summary.skipped.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            )
        }
        lines.append(
            "events: " + counts(summary.events))
        lines.append("visits: \(summary.visitsOpened) opened, \(summary.visitsClosed) closed")
        if summary.byDevice.count > 1 { lines += deviceLines(summary.byDevice) }
        return lines
    }

    /// `enter N, exit N, dwell N`, then the rules' kinds (`overstay N`) when there are some.
    private static func counts(_ events: [EventKind: Int]) -> String {
        EventKind.allCases.filter { EventKind.always.contains($0) || events[$0] != nil }
            .map { "\($0.rawValue) \(events[$0] ?? 0)" }.joined(separator: ", ")
    }

    /// One line per device (the first `listedDevices` by name), for a fleet.
    private static func deviceLines(_ byDevice: [String: DeviceTally]) -> [String] {
        let devices = byDevice.keys.sorted()
        let width = devices.prefix(listedDevices).map(\.count).max() ?? 0
        var lines = ["per device:"]
        for device in devices.prefix(listedDevices) {
            let tally = byDevice[device]!
            let name = device.padding(toLength: width, withPad: " ", startingAt: 0)
            lines.append(
                "  \(name)  fixes \(tally.fixesRead) read, \(tally.fixesAccepted) accepted; events: "
                    + counts(tally.events))
        }
        if devices.count > listedDevices {
            lines.append("  … and \(devices.count - listedDevices) more devices (--json lists every one)")
        }
        return lines
    }

    /// `--json`'s summary.
    struct JSON: Encodable {
        struct Device: Encodable {
            var fixesRead: Int
            var fixesAccepted: Int
            var events: [String: Int]

            enum CodingKeys: String, CodingKey {
                case fixesRead = "fixes_read", fixesAccepted = "fixes_accepted", events
            }
        }

        var fixesRead: Int
        var fixesAccepted: Int
        var dropped: [String: Int]
        var skipped: [String: Int]
        var events: [String: Int]
        var visitsOpened: Int
        var visitsClosed: Int
        var devices: [String]
        var byDevice: [String: Device]
        var regions: Int

        enum CodingKeys: String, CodingKey {
            case fixesRead = "fixes_read", fixesAccepted = "fixes_accepted", dropped, skipped, events
            case visitsOpened = "visits_opened", visitsClosed = "visits_closed", devices, byDevice = "by_device",
                regions
        }

        init(_ summary: IngestSummary, regions: Int) {
            fixesRead = summary.fixesRead
            fixesAccepted = summary.fixesAccepted
            dropped = summary.dropped.byRawValue
            skipped = summary.skipped
            events = summary.events.byRawValue
            visitsOpened = summary.visitsOpened
            visitsClosed = summary.visitsClosed
            devices = summary.devices.sorted()
            byDevice = summary.byDevice.mapValues {
                Device(fixesRead: $0.fixesRead, fixesAccepted: $0.fixesAccepted, events: $0.events.byRawValue)
            }
            self.regions = regions
        }
    }
}
