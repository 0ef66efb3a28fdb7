import ArgumentParser
import FencepostCore
import Foundation

struct RenderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Draw regions, tracks, events and visits as pictures (SVG, or HTML you can pan and zoom).",
        discussion: """
            Pictures are self-contained and need no network: no tiles, fonts or scripts are \
            fetched. Elements carry data-region-id, data-event-id and data-visit-id for scripts \
            and tests.
            """,
        subcommands: [RenderMap.self, RenderTimeline.self])
}

/// The selection `render map` and `render timeline` share.
struct RenderSelection: ParsableArguments {
    @Option(help: "Only this device's tracks, events and visits.")
    var device: String?

    @Option(
        help: ArgumentHelp(
            "Only this region (repeat for more): a map fits to them, a timeline has only their rows.", valueName: "id"))
    var region: [String] = []

    @Option(help: "Only what happened at or after this time (RFC 3339).")
    var since: String?

    @Option(help: "Only what happened before this time (RFC 3339).")
    var until: String?

    @Option(help: "Width of the picture in pixels.")
    var width: Int = 1200

    func validate() throws {
        for (name, value) in [("--since", since), ("--until", until)] {
            if let value, Timestamp.parse(value) == nil {
                throw ValidationError("\(name) is not an RFC 3339 time: \(value)")
            }
        }
        if let since = sinceTime, let until = untilTime, until <= since {
            throw ValidationError("--until must be after --since.")
        }
        guard width >= 300, width <= 20_000 else { throw ValidationError("--width must be 300…20000 pixels.") }
    }

    var sinceTime: Double? { since.flatMap(Timestamp.parse) }
    var untilTime: Double? { until.flatMap(Timestamp.parse) }

    /// Whether a time falls in the window (until exclusive, as in `events export`).
    func contains(_ time: Double) -> Bool {
        (sinceTime.map { time >= $0 } ?? true) && (untilTime.map { time < $0 } ?? true)
    }

    func includes(device candidate: String) -> Bool { device.map { $0 == candidate } ?? true }
    func includes(region candidate: String) -> Bool { region.isEmpty || region.contains(candidate) }

    /// `2019-02-18 07:45 – 09:00 UTC`, or nil without a window.
    var windowText: String? {
        guard since != nil || until != nil else { return nil }
        let from = sinceTime.map { Timestamp.format(seconds: $0) } ?? "the start"
        let to = untilTime.map { Timestamp.format(seconds: $0) } ?? "now"
        return "from \(from) to \(to)"
    }
}

/// `-o FILE.svg|FILE.html`: where a picture goes, and in which form.
struct PictureOutput: ParsableArguments {
    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "The picture to write: FILE.svg, or FILE.html for a page with pan, zoom and details.", valueName: "file"))
    var output: String

    enum Form { case svg, html }

    var form: Form? {
        let lower = output.lowercased()
        if lower.hasSuffix(".svg") { return .svg }
        if lower.hasSuffix(".html") || lower.hasSuffix(".htm") { return .html }
        return nil
    }

    /// Writes the text whole (through a temporary file renamed into place).
    func write(_ text: String) throws {
        try OutputSink.writeWhole(text, to: output)
    }
}

/// `-o FILE.svg`: a picture that is an SVG only (the timeline).
struct SVGOutput: ParsableArguments {
    @Option(name: [.short, .long], help: ArgumentHelp("The picture to write: FILE.svg.", valueName: "file"))
    var output: String

    func validate() throws {
        guard output.lowercased().hasSuffix(".svg") else {
            throw ValidationError("-o must name a .svg file, not \(output).")
        }
    }

    /// Writes the text whole (through a temporary file renamed into place).
    func write(_ text: String) throws {
        try OutputSink.writeWhole(text, to: output)
    }
}
