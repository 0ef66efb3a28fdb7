// Component benchmarks: times one layer at a time on real files, so each can be compared with
// its target (the monitor alone: 5 M fixes/s on one core) and with the peers in ../shared/bench.
//
//   fencepost-bench monitor REGIONS.geojson TRACE.csv [--repeat N]
//   fencepost-bench parse TRACE.csv
import FencepostCore
import FencepostFormats
import Foundation

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// The file's fixes, each named as the file names it (a fleet file's device column is read).
func readFixes(_ path: String) throws -> [Fix] {
    var reader = try TraceOpener.open(path, format: nil, device: nil)
    var fixes: [Fix] = []
    while let fix = try reader.next() { fixes.append(fix) }
    return fixes
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(64)
}

let arguments = CommandLine.arguments.dropFirst()
guard let command = arguments.first else { fail("usage: fencepost-bench monitor REGIONS TRACE [--repeat N] | parse TRACE") }
let rest = Array(arguments.dropFirst())
let repeats = rest.firstIndex(of: "--repeat").flatMap { rest.indices.contains($0 + 1) ? Int(rest[$0 + 1]) : nil } ?? 3

do {
    switch command {
    case "monitor":
        guard rest.count >= 2 else { fail("usage: fencepost-bench monitor REGIONS TRACE") }
        let regions = try RegionConfigLoader.load([rest[0]])
        let fixes = try readFixes(rest[1])
        let monitor = try Monitor(regions: regions, settings: MonitorSettings())
        var best = Double.infinity
        var events = 0
        for _ in 0..<repeats {
            var track = monitor.track(resuming: MonitorState())
            events = 0
            let elapsed = try seconds {
                for fix in fixes {
                    try monitor.process(fix, track: &track) { _ in events += 1 }
                }
            }
            best = min(best, elapsed)
        }
        print("monitor: \(fixes.count) fixes, \(regions.count) regions, \(events) events: best of \(repeats) \(String(format: "%.3f", best)) s = \(String(format: "%.2f", Double(fixes.count) / best / 1e6)) M fixes/s (one core)")
    case "parse":
        guard let path = rest.first else { fail("usage: fencepost-bench parse TRACE") }
        var count = 0
        let elapsed = try seconds { count = try readFixes(path).count }
        print("parse: \(count) fixes in \(String(format: "%.3f", elapsed)) s = \(String(format: "%.2f", Double(count) / elapsed / 1e6)) M fixes/s")
    default:
        fail("unknown benchmark \(command)")
    }
} catch {
    fail("error: \(error)")
}
