import FencepostCore
import FencepostTestSupport
import Foundation
import Testing

/// `fencepost regions list`, written as the regions are read: a batch at a time.
@Suite struct RegionsListCommandTests {
    /// More regions than a batch of the store's reading (8,192): the collection is one JSON
    /// document that applies again without a change, and the summaries are one array in id order.
    @Test func aListLongerThanABatchIsOneDocumentThatAppliesUnchanged() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let count = 8_300
        let features = (0..<count).map { index in
            let id = String(format: "r%05d", index)
            let lon = 8 + Double(index % 100) * 0.01
            let lat = 47 + Double(index / 100) * 0.01
            return
                #"{"type":"Feature","id":"\#(id)","properties":{"radius":50},"geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]}}"#
        }
        let config = #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"
        #expect(try await cli.run("regions", "apply", cli.write("many.geojson", config)).status == 0)

        let listed = try await cli.run("regions", "list", "--format", "geojson")
        #expect(listed.status == 0)
        let collection = try JSONParser.parse(Array(listed.stdout.utf8))
        guard case .object(let object) = collection, case .array(let items)? = object["features"] else {
            Issue.record("not a feature collection: \(listed.stdout.prefix(200))")
            return
        }
        #expect(items.count == count)
        #expect(listed.stdout.hasSuffix(#"],"type":"FeatureCollection"}"# + "\n"))
        let again = try await cli.run("regions", "apply", cli.write("listed.geojson", listed.stdout))
        #expect(again.stdout.contains("0 to add, 0 to update, 0 to remove, \(count) unchanged"), "\(again.stdout)")

        let summaries = try await cli.run("regions", "list", "--format", "json")
        guard case .array(let objects) = try JSONParser.parse(Array(summaries.stdout.utf8)) else {
            Issue.record("not an array: \(summaries.stdout.prefix(200))")
            return
        }
        let ids = objects.compactMap { object -> String? in
            guard case .object(let fields) = object, case .string(let id)? = fields["id"] else { return nil }
            return id
        }
        #expect(ids == (0..<count).map { String(format: "r%05d", $0) })
    }

    /// A reader that stops early (`| head`) ends the list quietly, with SIGPIPE's status (141),
    /// also where SIGPIPE is ignored and the write fails instead (a shell's `trap "" PIPE` here;
    /// the PostgreSQL client ignores it in the command itself), not with "write failed".
    @Test func aReaderThatStopsEarlyEndsTheListQuietly() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let features = (0..<3_000).map { index in
            #"{"type":"Feature","id":"r\#(index)","properties":{"radius":50},"geometry":{"type":"Point","coordinates":[8.\#(index),47]}}"#
        }
        let config = #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"
        #expect(try await cli.run("regions", "apply", cli.write("many.geojson", config)).status == 0)

        let (errors, status) = (cli.path("stderr.txt"), cli.path("status.txt"))
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = [
            "-c",
            #"trap "" PIPE; { "$0" regions list --format geojson 2>"$1"; echo $? >"$2"; } | head -c 100 >/dev/null"#,
            FencepostBinary.executable.path, errors, status,
        ]
        shell.environment = ProcessInfo.processInfo.environment.merging(["FENCEPOST_DB": cli.database]) { $1 }
        try shell.run()
        shell.waitUntilExit()
        #expect(try String(contentsOfFile: status, encoding: .utf8) == "141\n")
        #expect(try String(contentsOfFile: errors, encoding: .utf8) == "")
    }

    @Test func anEmptyStoreListsAnEmptyCollectionAndArray() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(
            try await cli.run(
                "regions", "apply", cli.write("none.geojson", #"{"type":"FeatureCollection","features":[]}"#)
            ).status == 0)
        #expect(
            try await cli.run("regions", "list", "--format", "geojson").stdout
                == #"{"features":[],"type":"FeatureCollection"}"# + "\n")
        #expect(try await cli.run("regions", "list", "--format", "json").stdout == "[]\n")
    }
}
