import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostRender
import FencepostStore
import Foundation

struct RenderMap: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "map",
        abstract: "Draw the regions, tracks, events and open visits on a map (SVG or HTML).",
        discussion: """
            Regions come from --regions (config files or directories, as `regions plan` reads \
            them), else from the store. A config that `regions plan` refuses is drawn anyway: the \
            offending features in red, marked where the problem is and numbered after the list \
            of reasons under the map; the exit code is then 1.

            Tracks come from --trace files, run through the same filter and monitor as ingest \
            (with the default settings, nothing stored): the accepted fixes as a line, the \
            dropped ones faintly, and the events the monitor finds. Without --trace, events, \
            open visits and tracks come from the store: each device's stored fixes (fencepost \
            track) as a line; a device with none stored gets a line joining its crossings in time \
            order, ending at its last known position (dashed).

            Web Mercator, fitted to what is shown, with a scale bar and a north arrow. Regions \
            too small to see at the scale become dots, or numbered clusters where they crowd; \
            labels that would overlap are left out (the HTML form shows them as you zoom).
            """)

    @OptionGroup var store: StoreOptions

    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp("Region config files or directories (default: the store's regions).", valueName: "path"))
    var regions: [String] = []

    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp(
            "Trace files to draw and run through the monitor (any format ingest reads).", valueName: "file"))
    var trace: [String] = []

    @OptionGroup var selection: RenderSelection
    @OptionGroup var output: PictureOutput

    func validate() throws {
        guard output.form != nil else {
            throw ValidationError("-o must name a .svg or .html file, not \(output.output).")
        }
        if trace.contains("-") { throw ValidationError("--trace reads files; standard input is not supported.") }
    }

    func run() async throws {
        try await CommandFailure.reporting {
            var scene = MapScene()
            var sources: [String] = []
            var issues: [String] = []
            if regions.isEmpty {
                let store = try await openExistingStore(needed: true)!
                scene.regions = try await store.monitoredRegions().map(\.region)
                sources.append("regions from the store")
            } else {
                let loaded = MapSources.regions(paths: regions)
                (scene.regions, scene.refused, issues) = loaded
                sources.append("regions from \(regions.joined(separator: ", "))")
            }
            let monitored = scene.regions
            if !selection.region.isEmpty {
                let known = Set(scene.regions.map(\.id))
                let missing = selection.region.filter { !known.contains($0) }
                guard missing.isEmpty else {
                    throw CommandFailure.invalidInput(
                        missing.map {
                            "error: no region \($0) in \(regions.isEmpty ? "the store" : regions.joined(separator: ", "))"
                        })
                }
                scene.regions = scene.regions.filter { selection.includes(region: $0.id) }
            }
            var warnings: [String] = []
            if !trace.isEmpty {
                let activity: MapSources.TraceActivity
                do {
                    activity = try MapSources.traces(trace, regions: monitored, selection: selection)
                } catch let error as TraceReadError {
                    throw CommandFailure.invalidInput(["error: \(error)"])
                }
                scene.tracks = activity.tracks
                scene.events = activity.events
                scene.openVisits = MapVisit.visits(from: activity.events).filter(\.isOpen)
                sources.append("\(activity.fixes) fixes from \(trace.joined(separator: ", "))")
                if activity.outOfOrder > 0 {
                    warnings.append(
                        "warning: \(activity.outOfOrder) fixes came after later ones of their device once the trace streamed, and were dropped (as ingest drops them)"
                    )
                }
            } else if let store = try await openExistingStore(needed: false) {
                (scene.events, scene.openVisits, scene.tracks) = try await MapSources.storeActivity(
                    store, selection: selection)
                sources.append("events from the store")
            }
            scene.caption = caption(scene, sources: sources)

            let renderer = MapRenderer(
                options: .init(width: Double(selection.width), zoomableLabels: output.form == .html))
            let drawing = renderer.draw(scene)
            let text =
                output.form == .html
                ? MapPage.html(scene, drawing: drawing, title: "Fencepost map: " + (scene.caption ?? ""))
                : drawing.svg
            try output.write(text)
            Console.error(
                warnings + [
                    "wrote \(output.output): \(Self.count(scene.regions.count, "region")), \(Self.count(scene.tracks.count, "track")), "
                        + "\(Self.count(scene.events.count, "event")), \(Self.count(scene.openVisits.count, "open visit")) "
                        + "(\(Int(drawing.frame.width)) × \(Int(drawing.frame.height)) px map; \(drawing.labelsShown) of \(drawing.labelsTotal) labels shown)"
                ])
            if !issues.isEmpty {
                throw CommandFailure.invalidInput(
                    issues + ["the refused features are drawn on \(output.output), numbered as above"])
            }
        }
    }

    /// The store, when there is one: a picture never creates a store. Missing and `needed`
    /// (regions from the store) is an error; missing and not needed is no events.
    private func openExistingStore(needed: Bool) async throws -> Store? {
        guard let existing = try await store.openIfPresent() else {
            if needed {
                throw CommandFailure.io(
                    "error: no store at \(store.path); name region configs with --regions, or set --db")
            }
            return nil
        }
        return existing
    }

    /// `1 region`, `2 regions`.
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }

    private func caption(_ scene: MapScene, sources: [String]) -> String {
        var parts = [Self.count(scene.regions.count, "region")]
        let devices = Set(scene.tracks.map(\.device)).count
        if devices > 0 { parts.append(Self.count(devices, "device")) }
        parts.append(Self.count(scene.events.count, "event"))
        if !scene.openVisits.isEmpty { parts.append(Self.count(scene.openVisits.count, "open visit")) }
        if let first = scene.events.first, let last = scene.events.last {
            parts.append("\(Timestamp.format(seconds: first.time)) – \(Timestamp.format(seconds: last.time))")
        }
        if let window = selection.windowText { parts.append(window) }
        if let device = selection.device { parts.append("device \(device)") }
        return (parts + sources).joined(separator: " · ")
    }
}
