import ArgumentParser
import FencepostCore
import FencepostFormats

/// How `ingest`, `scan` and `watch` read trace files: whose fixes they are and which columns or
/// properties hold what. The zone of times written without one is each command's own option
/// (`--tz` for ingest and watch; scan's `--tz` already names the zone of its output).
struct ReaderOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            """
            Device id for every fix of every file. Default: each fix's own device (a CSV device \
            column, a GeoJSON device property, an OwnTracks user/device or tid), so one file may hold \
            a fleet; else the track's or the file's name.
            """, valueName: "id"))
    var device: String?

    @Option(
        help: ArgumentHelp(
            "CSV: the column naming each row's device (default: \(CSVTraceReader.spoken(CSVTraceReader.deviceNames)), in any case).",
            valueName: "column"))
    var deviceColumn: String?

    @Option(
        help: ArgumentHelp(
            "CSV: the time column (default: \(CSVTraceReader.spoken(CSVTraceReader.timeNames)), in any case).",
            valueName: "column"))
    var timeColumn: String?

    @Option(
        help: ArgumentHelp(
            "CSV: the latitude column (default: \(CSVTraceReader.spoken(CSVTraceReader.latNames))).",
            valueName: "column"))
    var latColumn: String?

    @Option(
        help: ArgumentHelp(
            "CSV: the longitude column (default: \(CSVTraceReader.spoken(CSVTraceReader.lonNames))).",
            valueName: "column"))
    var lonColumn: String?

    @Option(
        help: ArgumentHelp(
            "CSV: the column of horizontal accuracy in metres (default: \(CSVTraceReader.spoken(CSVTraceReader.accuracyNames)); else hdop).",
            valueName: "column"))
    var accuracyColumn: String?

    @Option(
        help: ArgumentHelp(
            "GeoJSON: the feature property naming the device (default: device, else name, else tid).",
            valueName: "property"))
    var deviceProperty: String?

    /// What the readers are given; `zone` is the command's zone of times written without one.
    func options(zone: LocalTimeZone?) -> TraceReaderOptions {
        TraceReaderOptions(
            device: device, deviceColumn: deviceColumn, timeColumn: timeColumn, latColumn: latColumn,
            lonColumn: lonColumn,
            accuracyColumn: accuracyColumn, deviceProperty: deviceProperty, zone: zone)
    }

    func validate() throws {
        for (name, value) in [
            ("--device", device), ("--device-column", deviceColumn), ("--time-column", timeColumn),
            ("--lat-column", latColumn),
            ("--lon-column", lonColumn), ("--accuracy-column", accuracyColumn), ("--device-property", deviceProperty),
        ] where value?.isEmpty == true {
            throw ValidationError("\(name) must not be empty.")
        }
    }

    /// The zone an option names, or a usage error naming the option.
    static func zone(_ identifier: String?, option: String) throws -> LocalTimeZone? {
        guard let identifier else { return nil }
        guard let zone = LocalTimeZone(identifier: identifier) else {
            throw ValidationError(
                "\(option): unknown time zone \(identifier) (an IANA name such as Europe/Berlin or America/New_York).")
        }
        return zone
    }
}

/// `--tz` of `ingest` and `watch`.
let zonelessTimesHelp = ArgumentHelp(
    "The IANA time zone of times written without a zone or offset in CSV and GeoJSON files, such as 2020-06-30T00:05:00 (default: UTC). Times with Z or an offset are read as written.",
    valueName: "zone")
