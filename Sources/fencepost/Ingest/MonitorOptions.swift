import ArgumentParser
import FencepostCore
import FencepostFormats

/// The filter and monitor options `ingest` and `scan` share (per-region properties override
/// the run's hysteresis and delays).
struct MonitorOptions: ParsableArguments {
    @Option(
        help:
            "Hysteresis band in metres (0 turns it off). Given, it is used as is; by default 20 m widened by each fix's accuracy."
    )
    var hysteresis: Double?

    @Option(help: "Seconds an enter must hold before it is confirmed.")
    var enterDelay: Double = MonitorSettings().enterDelay

    @Option(help: "Seconds an exit must hold before it is confirmed.")
    var exitDelay: Double = MonitorSettings().exitDelay

    @Option(
        help:
            "Widen the hysteresis band to this many times a fix's reported accuracy when that is larger (0: off; default 3, or 0 with --hysteresis)."
    )
    var accuracyBandFactor: Double?

    @Option(
        help:
            "A fix deeper inside than this many times its accuracy confirms an enter at once (on a dense trace, from the second fix inside on)."
    )
    var deepEntryFactor: Double = MonitorSettings().deepEntryFactor

    @Option(
        help:
            "Fixes less than this many seconds apart make a dense trace: there one fix inside never makes a visit alone (it may lie); farther apart, a single deep fix does, flagged single_fix."
    )
    var sparseInterval: Double = MonitorSettings().sparseInterval

    @Option(help: "A pass-through counts when it goes deeper than this many times the fixes' accuracy (0: any).")
    var passThroughDepthFactor: Double = MonitorSettings().passThroughDepthFactor

    @Option(help: "Seconds between fixes beyond which crossing times are not interpolated.")
    var maxGap: Double = MonitorSettings().maxGap

    @Option(help: "Fixes with a reported accuracy worse than this many metres are dropped.")
    var maxAccuracy: Double = FixFilterSettings().maxAccuracy

    @Option(help: "Fixes implying a speed above this many m/s are dropped as teleports.")
    var maxSpeed: Double = FixFilterSettings().maxSpeed

    @Flag(help: "Do not report regions crossed between two fixes that are both outside.")
    var noPassThrough = false

    func validate() throws {
        // The same limits as a region's own properties (RegionLimits).
        for (name, value, limit) in [
            ("--hysteresis", hysteresis ?? 0, RegionLimits.hysteresis),
            ("--enter-delay", enterDelay, RegionLimits.delay),
            ("--exit-delay", exitDelay, RegionLimits.delay),
        ] {
            guard value >= 0 else { throw ValidationError("\(name) must be 0 or more.") }
            guard value <= limit.maximum else { throw ValidationError("\(name) \(limit.refusal(of: value)).") }
        }
        for (name, value) in [
            ("--accuracy-band-factor", accuracyBandFactor ?? 0), ("--deep-entry-factor", deepEntryFactor),
            ("--pass-through-depth-factor", passThroughDepthFactor),
        ] where !(0...100).contains(value) {
            throw ValidationError("\(name) must be from 0 to 100.")
        }
        for (name, value) in [
            ("--max-gap", maxGap), ("--max-accuracy", maxAccuracy), ("--max-speed", maxSpeed),
            ("--sparse-interval", sparseInterval),
        ]
        where !(value > 0) {
            throw ValidationError("\(name) must be greater than 0.")
        }
    }

    var monitor: MonitorSettings {
        var monitor = MonitorSettings()
        if let hysteresis {
            monitor.hysteresis = hysteresis
            monitor.accuracyBandFactor = 0
        }
        monitor.enterDelay = enterDelay
        monitor.exitDelay = exitDelay
        monitor.maxGap = maxGap
        monitor.passThrough = !noPassThrough
        if let accuracyBandFactor { monitor.accuracyBandFactor = accuracyBandFactor }
        monitor.deepEntryFactor = deepEntryFactor
        monitor.passThroughDepthFactor = passThroughDepthFactor
        monitor.sparseInterval = sparseInterval
        return monitor
    }

    var filter: FixFilterSettings {
        FixFilterSettings(maxAccuracy: maxAccuracy, maxSpeed: maxSpeed)
    }
}

/// `--format` of the trace readers.
enum TraceFormatChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, gpx, geojson, csv, takeout, timeline, plt, owntracks, tcx, fit, semantic
    var format: TraceFormat? { TraceFormat(rawValue: rawValue) }
}
