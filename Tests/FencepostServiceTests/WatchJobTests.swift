import FencepostCore
import FencepostService
import FencepostStore
import FencepostTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@Suite("The watch job of serve")
struct WatchJobTests {
    /// The fixture's walk through home as a CSV file of `device`.
    static func walkCSV(device: String) -> String {
        "time,lat,lon,accuracy,device\n"
            + ServiceFixture.walk().map { "\(Timestamp.format(seconds: $0.time)),\($0.lat),\($0.lon),5,\(device)" }
            .joined(separator: "\n") + "\n"
    }

    @Test(
        "\"watch\" in the config: the regions folder applied, dropped files imported or refused, and /metrics counting them"
    )
    func watchJob() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let inbox = fixture.directory.appendingPathComponent("inbox")
        let regions = fixture.directory.appendingPathComponent("regions")
        try FileManager.default.createDirectory(at: regions, withIntermediateDirectories: true)
        // The folder keeps home and adds a second circle far away.
        let features = [
            ServiceFixture.circleFeature(
                id: "home", lat: ServiceFixture.home.lat, lon: ServiceFixture.home.lon, radius: 100),
            ServiceFixture.circleFeature(id: "away", lat: 46, lon: 7, radius: 100),
        ]
        try Data(#"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#.utf8)
            .write(to: regions.appendingPathComponent("regions.geojson"))
        let file = try TemporaryFile(
            #"{"watch": {"inbox": "\#(inbox.path)", "regions": "\#(regions.path)"}}"#, suffix: ".json")
        defer { file.remove() }
        let configuration = try ServiceConfiguration.load(path: file.path)
        #expect(configuration.watch == ServiceConfiguration.Watch(inbox: inbox.path, regions: regions.path))

        try await fixture.app(configuration).test(.router) { client in
            try await WebhookTests.eventually { try await fixture.store.monitoredRegions().count == 2 }
            #expect(try await fixture.store.monitoredRegions().map(\.region.id).sorted() == ["away", "home"])
            for (name, text) in [("walk.csv", Self.walkCSV(device: "walker")), ("broken.gpx", "<gpx><trk>\n<trkseg>")] {
                let hidden = inbox.appendingPathComponent(".\(name)")
                try Data(text.utf8).write(to: hidden)
                try FileManager.default.moveItem(at: hidden, to: inbox.appendingPathComponent(name))
            }
            var metrics = ""
            try await WebhookTests.eventually {
                metrics = try await client.execute(uri: "/metrics", method: .get).text
                return OperationsTests.sample(metrics, "fencepost_inbox_files_refused_total") == 1
                    && OperationsTests.sample(metrics, "fencepost_inbox_files_imported_total") == 1
            }
            #expect(OperationsTests.sample(metrics, "fencepost_inbox_files_imported_total") == 1)
            #expect(OperationsTests.sample(metrics, "fencepost_inbox_files_refused_total") == 1)
            #expect(OperationsTests.sample(metrics, "fencepost_inbox_files_pending_files") == 0)
            #expect(OperationsTests.sample(metrics, "fencepost_watch_region_applies_total") == 1)
            // The walk's visit of home, and the events API sees them.
            let events = try await client.execute(
                uri: "/v1/events?device=walker", method: .get, headers: .bearer(fixture.admin))
            #expect(events.json?["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } == ["enter", "exit"])
        }
        #expect(FileManager.default.fileExists(atPath: inbox.appendingPathComponent("done/walk.csv").path))
        #expect(
            FileManager.default.fileExists(atPath: inbox.appendingPathComponent("failed/broken.gpx.error.txt").path))
    }

    @Test("a watch config without folders, or with a regions path that is no folder, is refused naming the file")
    func refusedConfigs() throws {
        for (text, reason) in [
            (#"{"watch": {}}"#, ":1:11: watch: needs an inbox, a regions folder or both"),
            (
                #"{"watch": {"regions": "/nowhere/at/all"}}"#,
                ":1:23: watch.regions: is not a directory: /nowhere/at/all"
            ),
        ] {
            let file = try TemporaryFile(text, suffix: ".json")
            defer { file.remove() }
            #expect {
                try ServiceConfiguration.load(path: file.path)
            } throws: { error in
                (error as? ConfigurationError).map { "\($0)".hasPrefix(file.path + reason) } ?? false
            }
        }
    }
}
