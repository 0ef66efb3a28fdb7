// Component benchmarks: times one layer at a time on real files, so each can be compared with
// its target (the monitor alone: 5 M fixes/s on one core) and with the peers in ../shared/bench.
//
//   fencepost-bench monitor REGIONS.geojson TRACE.csv [--repeat N]
//   fencepost-bench parse TRACE.csv
//   fencepost-bench xml ours|foundation FILE.xml   (an Apple Health export.xml: our streaming
//                                                    reader against FoundationXML's XMLParser)
import FencepostCore
import FencepostFormats
import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

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
guard let command = arguments.first else {
    fail("usage: fencepost-bench monitor REGIONS TRACE [--repeat N] | parse TRACE")
}
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
            var track = monitor.track(resuming: MonitorState(), device: fixes.first?.device ?? "bench")
            events = 0
            let elapsed = try seconds {
                for fix in fixes {
                    try monitor.process(fix, track: &track) { _ in events += 1 }
                }
            }
            best = min(best, elapsed)
        }
        print(
            "monitor: \(fixes.count) fixes, \(regions.count) regions, \(events) events: best of \(repeats) \(String(format: "%.3f", best)) s = \(String(format: "%.2f", Double(fixes.count) / best / 1e6)) M fixes/s (one core)"
        )
    case "parse":
        guard let path = rest.first else { fail("usage: fencepost-bench parse TRACE") }
        var count = 0
        let elapsed = try seconds { count = try readFixes(path).count }
        print(
            "parse: \(count) fixes in \(String(format: "%.3f", elapsed)) s = \(String(format: "%.2f", Double(count) / elapsed / 1e6)) M fixes/s"
        )
    case "xml":
        guard rest.count >= 2, ["ours", "foundation"].contains(rest[0]) else {
            fail("usage: fencepost-bench xml ours|foundation FILE.xml")
        }
        var tally = XMLTally()
        let elapsed = try seconds {
            tally = rest[0] == "ours" ? try XMLTally.ours(rest[1]) : try XMLTally.foundation(rest[1])
        }
        print(
            "xml \(rest[0]): \(tally.elements) elements, \(tally.attributes) attributes, \(tally.textBytes) text bytes in \(String(format: "%.2f", elapsed)) s"
        )
    default:
        fail("unknown benchmark \(command)")
    }
} catch {
    fail("error: \(error)")
}

/// What both XML readers see of a document: the same counts, so they did the same work.
struct XMLTally {
    var elements = 0
    var attributes = 0
    var textBytes = 0

    static func ours(_ path: String) throws -> XMLTally {
        var parser = XMLPullParser(source: try ByteSource(path: path))
        var tally = XMLTally()
        while let event = try parser.next() {
            switch event {
            case .start(_, let attributes):
                tally.elements += 1
                tally.attributes += attributes.count
            case .text(let text): tally.textBytes += text.utf8.count
            case .end: break
            }
        }
        return tally
    }

    static func foundation(_ path: String) throws -> XMLTally {
        // Swift 6.3.1's FoundationXML crashes at once (a null pointer in strlen) on the internal
        // DTD subset every Apple Health export starts with: measured on a copy without it.
        guard let stream = InputStream(fileAtPath: path) else { fail("cannot open \(path)") }
        let parser = XMLParser(stream: stream)
        let counter = Counter()
        parser.delegate = counter
        guard parser.parse() else { fail("FoundationXML: \(parser.parserError.map { "\($0)" } ?? "failed")") }
        // Whitespace-only text is not counted, as our reader does not report it.
        return counter.tally
    }

    private final class Counter: NSObject, XMLParserDelegate {
        var tally = XMLTally()
        private var text = ""

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            flush()
            tally.elements += 1
            tally.attributes += attributes.count
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            flush()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            text += string
        }

        private func flush() {
            if text.contains(where: { !$0.isWhitespace }) { tally.textBytes += text.utf8.count }
            text = ""
        }
    }
}
