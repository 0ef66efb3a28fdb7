import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostStore
import Foundation

struct WhereCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "where",
        abstract: "Where a device was at a time, from its stored fixes.",
        discussion: """
            Prints the position at --at: a stored fix at that time, or the position interpolated \
            between the fixes before and after it (linearly in time, on the straight line \
            between them), and those fixes. When the two fixes are more than --max-gap seconds \
            apart, or the time is before the first stored fix or after the last, there is no \
            position: the nearest fixes are printed and the exit code is 1.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: "The device.")
    var device: String

    @Option(help: "The time (RFC 3339, or a duration back from now: 2h).")
    var at: String

    @Option(help: "The most seconds between the fixes around the time for a position between them.")
    var maxGap: Double = MonitorSettings().maxGap

    @Option(help: "Output format: table or json.")
    var format: TableOrJSON = .table

    func validate() throws {
        try TimeArgument.check(("--at", at))
        guard maxGap > 0, maxGap.isFinite else {
            throw ValidationError("--max-gap must be a positive number of seconds")
        }
    }

    func run() async throws {
        try await CommandFailure.reporting {
            let store = try await store.open(createIfMissing: false)
            try await HistoryTimes.requireHistory(of: device, in: store)
            guard let time = TimeArgument.parse(at) else { throw ValidationError("--at: \(at)") }
            let around = try await store.fixesAround(device: device, time: time)
            let answer = TrackPosition.at(time, before: around.before, after: around.after, maxGap: maxGap)
            switch format {
            case .table:
                Console.output(
                    WhereReport.lines(answer, device: device, time: time, maxGap: maxGap).joined(separator: "\n"))
            case .json: Console.output(WhereReport.json(answer, device: device, time: time).canonicalText())
            }
            // No position is an answer, and a failure for a script: exit 1, the lines said why.
            if WhereReport.position(answer) == nil { throw CommandFailure.invalidInput([]) }
        }
    }
}

/// `fencepost where`'s output.
enum WhereReport {
    static func position(_ answer: TrackPosition) -> Position? {
        switch answer {
        case .exact(let fix): return fix.position
        case .interpolated(let position, _, _, _): return position
        case .gap, .beforeFirst, .afterLast, .unknown: return nil
        }
    }

    static func lines(_ answer: TrackPosition, device: String, time: Double, maxGap: Double) -> [String] {
        let at = Timestamp.format(seconds: time)
        switch answer {
        case .exact(let fix):
            return ["\(device) at \(at): \(coordinates(fix.position)) (a stored fix)", "fix     " + line(fix)]
        case .interpolated(let position, let before, let after, let fraction):
            let percent = TrackWriter.decimal(fraction * 100, places: 1)
            return [
                "\(device) at \(at): \(coordinates(position)) (interpolated, \(percent) % of the way from the fix before to the fix after)",
                "before  " + line(before), "after   " + line(after),
            ]
        case .gap(let before, let after):
            let seconds = TrackWriter.decimal(after.time - before.time, places: 3)
            return [
                "\(device) at \(at): no position: the fixes around it are \(seconds) s apart, more than max_gap (\(TrackWriter.decimal(maxGap, places: 3)) s)",
                "before  " + line(before), "after   " + line(after),
            ]
        case .beforeFirst(let first):
            return ["\(device) at \(at): no position: before the first stored fix", "first   " + line(first)]
        case .afterLast(let last):
            return ["\(device) at \(at): no position: after the last stored fix", "last    " + line(last)]
        case .unknown:
            return ["\(device) at \(at): no position: no stored fixes"]
        }
    }

    static func json(_ answer: TrackPosition, device: String, time: Double) -> JSONValue {
        var object: [String: JSONValue] = ["device": .string(device), "at": .string(Timestamp.format(seconds: time))]
        let status: String
        switch answer {
        case .exact(let fix):
            status = "exact"
            object["fix"] = json(fix)
        case .interpolated(_, let before, let after, let fraction):
            status = "interpolated"
            (object["before"], object["after"], object["fraction"]) = (json(before), json(after), .number(fraction))
        case .gap(let before, let after):
            status = "gap"
            (object["before"], object["after"]) = (json(before), json(after))
        case .beforeFirst(let fix):
            status = "before_first"
            object["after"] = json(fix)
        case .afterLast(let fix):
            status = "after_last"
            object["before"] = json(fix)
        case .unknown:
            status = "unknown"
        }
        object["status"] = .string(status)
        object["position"] =
            position(answer).map { .object(["lat": .number($0.lat), "lon": .number($0.lon)]) } ?? .null
        return .object(object)
    }

    private static func json(_ fix: Fix) -> JSONValue {
        var object: [String: JSONValue] = [
            "time": .string(Timestamp.format(seconds: fix.time)), "lat": .number(fix.lat), "lon": .number(fix.lon),
        ]
        if let accuracy = fix.accuracy { object["accuracy"] = .number(accuracy) }
        return .object(object)
    }

    private static func coordinates(_ position: Position) -> String {
        TrackWriter.decimal(position.lat, places: 7) + "," + TrackWriter.decimal(position.lon, places: 7)
    }

    private static func line(_ fix: Fix) -> String {
        Timestamp.format(seconds: fix.time) + "  " + coordinates(fix.position)
            + (fix.accuracy.map { "  ±" + TrackWriter.decimal($0, places: 1) + " m" } ?? "")
    }
}
