import ArgumentParser
import FencepostCore
import FencepostRender
import FencepostStore
import Foundation

struct RenderTimeline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "Draw the store's visits as bars per region over time (SVG), with health rows.",
        discussion: """
            One row per region with visits in the window, in order of the first visit; open \
            visits run to the device's last fix. Pass-throughs (a region crossed between two \
            fixes) are marked with a triangle; visits whose crossing could not be interpolated \
            (fixes more than max_gap apart) have a dashed outline. Steps per day, sleep nights \
            and workouts from `health import` get rows of their own when there are any. Times \
            are UTC.
            """)

    @OptionGroup var store: StoreOptions
    @OptionGroup var selection: RenderSelection
    @OptionGroup var output: SVGOutput

    func run() async throws {
        try await CommandFailure.reporting {
            let store = try await self.store.open(createIfMissing: false)
            let scene = try await timeline(store)
            // A region neither monitored nor visited is a typo, not an empty timeline.
            let known = Set(try await store.monitoredRegions().map(\.region.id)).union(scene.visits.map(\.regionID))
            let unknown = selection.region.filter { !known.contains($0) }
            guard unknown.isEmpty else {
                throw CommandFailure.invalidInput(
                    unknown.map { "error: no region \($0) in the store (monitored or visited)" })
            }
            try output.write(TimelineRenderer(width: Double(selection.width)).svg(scene))
            let open = scene.visits.filter(\.isOpen).count
            Console.error([
                "wrote \(output.output): \(scene.visits.count) visits (\(open) open) in \(Set(scene.visits.map(\.regionID)).count) regions, \(scene.health.count) health events"
            ])
        }
    }

    private func timeline(_ store: Store) async throws -> TimelineScene {
        var scene = TimelineScene(since: selection.sinceTime, until: selection.untilTime)
        let since = selection.sinceTime ?? -.infinity
        let until = selection.untilTime ?? .infinity
        try await store.forEachVisit(device: selection.device) { row in
            guard selection.includes(region: row.region) else { return }
            let entered = Double(row.enteredMs) / 1_000
            let exited = row.exitedMs.map { Double($0) / 1_000 }
            guard entered < until, (exited ?? .infinity) >= since else { return }
            scene.visits.append(
                MapVisit(
                    id: row.id, device: row.device, regionID: row.region, enteredAt: entered, exitedAt: exited,
                    exitReason: row.exitReason))
        }
        // The flags of the visits' enter and exit events: pass-throughs and gaps.
        var flags: [String: Set<String>] = [:]
        try await store.forEachEvent(
            EventQuery(since: selection.sinceTime, until: selection.untilTime, device: selection.device)
        ) { row in
            if row.source == "geofence", let visit = row.visitID, !row.flags.isEmpty {
                flags[visit, default: []].formUnion(row.flags)
            }
            if row.source == "health", let bar = Self.healthBar(row) { scene.health.append(bar) }
        }
        for index in scene.visits.indices { scene.visits[index].flags = flags[scene.visits[index].id] ?? [] }
        for device in Set(scene.visits.filter(\.isOpen).map(\.device)) {
            if let last = try await store.deviceState(device)?.monitor.lastFix { scene.lastFix[device] = last.time }
        }
        for region in try await store.monitoredRegions().map(\.region) {
            if let name = region.name { scene.regionNames[region.id] = name }
        }
        var parts = ["\(scene.visits.count) visits", "\(scene.health.count) health events"]
        if let window = selection.windowText { parts.append(window) }
        if let device = selection.device { parts.append("device \(device)") }
        scene.caption = "Fencepost timeline · " + parts.joined(separator: " · ")
        return scene
    }

    /// A day's steps, a night's sleep or a workout as a bar; other health events have no row.
    static func healthBar(_ row: EventRow) -> HealthBar? {
        guard let properties = try? JSONParser.parse(Data(row.properties.utf8)) else { return nil }
        let start = Double(row.timeMs) / 1_000
        switch row.kind {
        case "steps":
            guard let date = properties["date"]?.stringValue else { return nil }
            let offset = properties["utc_offset"]?.stringValue ?? "Z"
            let dayStart = Timestamp.parse("\(date)T00:00:00\(offset)") ?? start
            let value = properties["value"]?.numberValue ?? 0
            return HealthBar(
                row: "steps", eventID: row.id, start: dayStart, end: dayStart + 86_400, value: value,
                label: Self.count(value))
        case "sleep", "workout":
            guard let end = properties["end"]?.stringValue.flatMap(Timestamp.parse) else { return nil }
            let from = properties["start"]?.stringValue.flatMap(Timestamp.parse) ?? start
            let label =
                row.kind == "workout"
                ? properties["type"]?.stringValue ?? "workout" : Self.hours(properties["asleep_minutes"]?.numberValue)
            return HealthBar(row: row.kind, eventID: row.id, start: from, end: max(end, from), label: label)
        default:
            return nil
        }
    }

    static func count(_ value: Double) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.maximumFractionDigits = 0
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.usesGroupingSeparator = true
        formatter.groupingSeparator = ","
        return formatter.string(from: NSNumber(value: value)) ?? String(Int(value))
    }

    static func hours(_ minutes: Double?) -> String {
        guard let minutes else { return "sleep" }
        return String(format: "%.1f h", minutes / 60)
    }
}
