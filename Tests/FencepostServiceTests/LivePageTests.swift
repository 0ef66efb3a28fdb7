import FencepostCore
import FencepostService
import FencepostStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@Suite("The live page and its endpoints")
struct LivePageTests {
    @Test("The page and its assets come from the binary; the page asks for a token and loads nothing from elsewhere")
    func pageAndAssets() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            let page = try await client.execute(uri: "/", method: .get)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(page.text.contains(#"name="token""#))
            #expect(!page.text.contains("http://") && !page.text.contains("https://"), "no CDN, fonts or tiles")
            let policy = try #require(page.headers[HTTPField.Name("Content-Security-Policy")!])
            #expect(policy.contains("script-src 'self'") && policy.contains("connect-src 'self'"))
            for asset in ["/assets/live.js", "/assets/map.js", "/assets/live.css"] {
                let answer = try await client.execute(uri: asset, method: .get)
                #expect(answer.status == .ok && answer.body.readableBytes > 500, "\(asset)")
            }
            let script = try await client.execute(uri: "/assets/live.js", method: .get).text
            #expect(script.contains("sessionStorage") && script.contains("Authorization"))
            #expect(!script.contains("EventSource"), "EventSource would put the token in the URL")
        }
    }

    @Test("The map of the regions needs a token and carries data-region-id")
    func map() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            #expect(try await client.execute(uri: "/v1/live/map.svg", method: .get).status == .unauthorized)
            let map = try await client.execute(uri: "/v1/live/map.svg", method: .get, headers: .bearer(fixture.reader))
            #expect(map.status == .ok)
            #expect(map.text.contains(#"data-region-id="home""#))
            // A new region shows on the next load.
            let feature = ServiceFixture.circleFeature(id: "office", lat: 47.01, lon: 8.0, radius: 80)
            _ = try await client.execute(
                uri: "/v1/regions/office", method: .put, headers: .bearer(fixture.admin),
                body: ByteBuffer(string: feature))
            let again = try await client.execute(
                uri: "/v1/live/map.svg", method: .get, headers: .bearer(fixture.reader))
            #expect(again.text.contains(#"data-region-id="office""#))
        }
    }

    @Test("Posted fixes become the device's recent track; a device token sees only its own device")
    func tracksAndSnapshot() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        try await fixture.app().test(.router) { client in
            var walk = ServiceFixture.walk()
            walk.insert(walk[3], at: 4)  // a duplicate: dropped by the filter, not drawn
            let postedAt = ContinuousClock.now
            let posted = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                body: ByteBuffer(string: ServiceFixture.batchBody(walk)))
            #expect(posted.json?["dropped"]?["duplicate_time"]?.numberValue == 1)
            let tracks = try await client.execute(
                uri: "/v1/live/tracks?after=0", method: .get, headers: .bearer(fixture.reader))
            let device = try #require(tracks.json?["devices"]?.arrayValue?.first)
            #expect(device["device"]?.stringValue == "phone")
            #expect(device["track"]?.arrayValue?.count == 13)
            let seq = try #require(tracks.json?["tracks_seq"]?.numberValue)
            let again = try await client.execute(
                uri: "/v1/live/tracks?after=\(Int(seq))", method: .get, headers: .bearer(fixture.reader))
            // Within 2 s of its save (always, but on a machine so busy that these three requests
            // took longer: then the save is no longer news, and not sent, which is right too).
            if ContinuousClock.now - postedAt < .milliseconds(1_900) {
                #expect(again.json?["devices"]?.arrayValue?.count == 1, "sent again while it may still be news")
            }
            try await Task.sleep(for: .milliseconds(2_200))  // past the 2 s a save may still be news
            let later = try await client.execute(
                uri: "/v1/live/tracks?after=\(Int(seq))", method: .get, headers: .bearer(fixture.reader))
            let cursor = try #require(later.json?["tracks_seq"]?.numberValue)
            #expect(cursor >= seq + 2_200)
            let none = try await client.execute(
                uri: "/v1/live/tracks?after=\(Int(cursor))", method: .get, headers: .bearer(fixture.reader))
            #expect(none.json?["devices"]?.arrayValue?.isEmpty == true, "nothing moved since")

            let snapshot = try await client.execute(
                uri: "/v1/live/snapshot", method: .get, headers: .bearer(fixture.admin))
            let phone = try #require(
                snapshot.json?["devices"]?.arrayValue?.first { $0["device"]?.stringValue == "phone" })
            #expect(phone["last"]?["lat"]?.numberValue == walk.last!.lat, "the last position, from the store")
            #expect(snapshot.json?["events"]?.arrayValue?.map { $0["kind"]?.stringValue } == ["enter", "exit"])
            #expect(snapshot.json?["map_tiles"] == .null)

            let other = try await client.execute(
                uri: "/v1/live/snapshot", method: .get, headers: .bearer(fixture.otherDevice))
            #expect(other.json?["devices"]?.arrayValue?.isEmpty == true)
            #expect(other.json?["events"]?.arrayValue?.isEmpty == true)
            let otherTracks = try await client.execute(
                uri: "/v1/live/tracks?after=0", method: .get, headers: .bearer(fixture.otherDevice))
            #expect(otherTracks.json?["devices"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test("Every instance draws every device's track, from the store; a store keeping no history draws none")
    func tracksAcrossInstances() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let second = try await fixture.secondStore()
        try await fixture.app().test(.router) { posting in
            try await fixture.app(store: second).test(.router) { drawing in
                let before = try await drawing.execute(
                    uri: "/v1/live/tracks?after=0", method: .get, headers: .bearer(fixture.reader))
                #expect(before.json?["devices"]?.arrayValue?.isEmpty == true)
                let cursor = try #require(before.json?["tracks_seq"]?.numberValue)
                let walk = ServiceFixture.walk()
                _ = try await posting.execute(
                    uri: "/v1/devices/phone/locations", method: .post, headers: .bearer(fixture.phone),
                    body: ByteBuffer(string: ServiceFixture.batchBody(Array(walk[0..<6]))))
                let first = try await drawing.execute(
                    uri: "/v1/live/tracks?after=\(Int(cursor))", method: .get, headers: .bearer(fixture.reader))
                let track = try #require(first.json?["devices"]?.arrayValue?.first?["track"]?.arrayValue)
                #expect(track.count == 6)
                #expect(track.last?.arrayValue?[1].numberValue == walk[5].lat)
                // An OsmAnd fix to the first instance extends the track the second one draws.
                let next = walk[6]
                _ = try await posting.execute(
                    uri:
                        "/osmand?id=phone&lat=\(next.lat)&lon=\(next.lon)&timestamp=\(Int(next.time))&token=\(fixture.phone)",
                    method: .get)
                let moved = try await drawing.execute(
                    uri: "/v1/live/tracks?after=\(Int(try #require(first.json?["tracks_seq"]?.numberValue)))",
                    method: .get, headers: .bearer(fixture.reader))
                #expect(moved.json?["devices"]?.arrayValue?.first?["track"]?.arrayValue?.count == 7)
                let snapshot = try await drawing.execute(
                    uri: "/v1/live/snapshot", method: .get, headers: .bearer(fixture.reader))
                #expect(snapshot.json?["devices"]?.arrayValue?.first?["track"]?.arrayValue?.count == 7)

                // With no history kept, the page shows where the device is but draws no track.
                try await fixture.store.setHistoryDays(0)
                try await fixture.store.pruneHistory()
                let bare = try await drawing.execute(
                    uri: "/v1/live/snapshot", method: .get, headers: .bearer(fixture.reader))
                let phone = try #require(bare.json?["devices"]?.arrayValue?.first)
                #expect(phone["track"]?.arrayValue?.isEmpty == true)
                #expect(phone["last"]?["lat"]?.numberValue == next.lat)
            }
        }
        await second.close()
    }

    @Test("map_tiles draws a basemap from a configured server; a bad template is refused")
    func mapTiles() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let good = fixture.directory.appendingPathComponent("tiles.json")
        try Data(
            #"{"map_tiles": "https://tiles.example.org/{z}/{x}/{y}.png", "map_tiles_attribution": "© Example"}"#.utf8
        ).write(to: good)
        let configuration = try ServiceConfiguration.load(path: good.path)
        #expect(
            configuration.mapTiles
                == ServiceConfiguration.MapTiles(
                    url: "https://tiles.example.org/{z}/{x}/{y}.png", attribution: "© Example"))
        try await fixture.app(configuration).test(.router) { client in
            let page = try await client.execute(uri: "/", method: .get)
            #expect(
                page.headers[HTTPField.Name("Content-Security-Policy")!]?.contains(
                    "img-src 'self' data: https://tiles.example.org") == true)
            let snapshot = try await client.execute(
                uri: "/v1/live/snapshot", method: .get, headers: .bearer(fixture.reader))
            #expect(snapshot.json?["map_tiles"]?["attribution"]?.stringValue == "© Example")
        }
        let bad = fixture.directory.appendingPathComponent("bad.json")
        try Data(#"{"map_tiles": "tiles.example.org/z/x/y.png"}"#.utf8).write(to: bad)
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.load(path: bad.path) }
    }
}
