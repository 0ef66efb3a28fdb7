import AsyncHTTPClient
import FencepostServerTestSupport
import FencepostTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// The live page of `fencepost serve` in a real headless Chromium, driven over WebDriver: a
/// person opens `/`, enters a token, sees the regions; a phone posts fixes, and the enter
/// event appears in the feed and the device moves on the map within 2 s. The last view is
/// saved as `.build/live-page.png` for a person to look at.
@Suite(.serialized) struct LivePageBrowserTests {
    /// The sample bus journey's fixes, in order (the GPX read with a pattern: the test must
    /// not lean on our own reader).
    static func sampleFixes() throws -> [(time: String, lat: String, lon: String)] {
        let text = try String(
            contentsOf: TestData.packageRoot.appendingPathComponent("samples/bus304_to_UL_2019-02-18.gpx"),
            encoding: .utf8)
        return text.matches(of: /<trkpt lat="([-\d.]+)" lon="([-\d.]+)">\s*<ele>[^<]*<\/ele>\s*<time>([^<]+)<\/time>/)
            .map {
                (String($0.3), String($0.1), String($0.2))
            }
    }

    static func body(_ fixes: ArraySlice<(time: String, lat: String, lon: String)>) -> String {
        #"{"fixes":["#
            + fixes.map { #"{"time":"\#($0.time)","lat":\#($0.lat),"lon":\#($0.lon),"accuracy":5}"# }.joined(
                separator: ",") + "]}"
    }

    @Test func tokenRegionsLiveEventsAndMovingDevice() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(
            try await cli.run("regions", "apply", TestData.packageRoot.appendingPathComponent("regions").path).status
                == 0)
        let admin = try await cli.run("tokens", "create", "--scope", "admin", "--name", "ops").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let phone = try await cli.run("tokens", "create", "--scope", "device:bus", "--name", "bus").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(admin.hasPrefix("fp_") && phone.hasPrefix("fp_"))
        let (server, port) = try await cli.serve()
        defer { if server.isRunning { server.terminate() } }
        let base = "http://127.0.0.1:\(port)"
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let browser = try await WebDriver.start()
        do {
            try await run(browser: browser, client: client, base: base, admin: admin, phone: phone)
        } catch {
            // What the page looked like when it went wrong.
            if let png = try? await browser.screenshot() { Self.save(png, as: "live-page-failure.png") }
            await browser.quit()
            try await client.shutdown()
            throw error
        }
        await browser.quit()
        try await client.shutdown()
    }

    private func run(browser: WebDriver, client: HTTPClient, base: String, admin: String, phone: String) async throws {
        // The page asks for a token; before it, nothing is shown.
        try await browser.open(base + "/")
        try await browser.wait(
            for: "document.querySelector('input[name=token]') && !document.getElementById('login').hidden", timeout: 10,
            "the token field")
        try await browser.type(admin, into: try await browser.element("input[name=token]"))
        try await browser.click(try await browser.element("#login button[type=submit]"))
        try await browser.wait(
            for: "document.querySelectorAll('#map svg .regions [data-region-id]').length === 36", timeout: 15,
            "36 regions drawn")
        try await browser.wait(
            for: "document.getElementById('status').textContent === 'live'", timeout: 10, "the event stream connected")
        #expect(
            try await browser.script("return document.getElementById('token').value;") as? String == "",
            "the field is emptied")

        // The bus's first fixes, up to the first stop (St Nessan's Road) and into it.
        let fixes = try Self.sampleFixes()
        #expect(fixes.count == 2144)
        let first = try await post(Self.body(fixes[0..<12]), client: client, base: base, token: phone)
        let enter = try #require(first.first { $0.kind == "enter" }, "the first fixes enter the first stop")
        try await browser.wait(
            for:
                "document.querySelector('#feed [data-event-id=\"\(enter.id)\"]') && document.querySelector('.live-events [data-event-id=\"\(enter.id)\"]')",
            timeout: 10, "the enter event in the feed and on the map")
        try await browser.wait(
            for: "document.querySelector('.live-devices circle[data-device=\"bus\"]')", timeout: 10,
            "the bus on the map"
        )
        let before =
            try await browser.script(
                "return document.querySelector('.live-devices circle[data-device=\"bus\"]').getAttribute('transform');")
            as? String
        try await browser.wait(
            for: "document.querySelector('#open-visits [data-visit-id]')", timeout: 10, "the open visit listed")

        // Further along the route: the bus moves.
        _ = try await post(Self.body(fixes[12..<400]), client: client, base: base, token: phone)
        try await browser.wait(
            for:
                "document.querySelector('.live-devices circle[data-device=\"bus\"]').getAttribute('transform') !== \(Self.quoted(before ?? ""))",
            timeout: 10, "the bus moved on the map")

        // A region's details on click.
        _ = try await browser.script(
            "document.querySelector('.regions [data-region-id=\"limerick-304:8400B6071101\"]').dispatchEvent(new MouseEvent('click', {bubbles: true}));"
        )
        try await browser.wait(
            for:
                "!document.getElementById('region-details').hidden && document.getElementById('region-details').textContent.indexOf('William Street') >= 0",
            timeout: 10, "the region's details")

        // The token never travelled in a URL.
        let urls =
            try await browser.script(
                "return [location.href].concat(performance.getEntriesByType('resource').map(function (e) { return e.name; }));"
            ) as? [String] ?? []
        #expect(urls.count > 3)
        #expect(!urls.contains { $0.contains(admin) }, "\(urls)")

        // The rest of the journey, for the picture; then the page, kept for a person.
        var events = 0
        for start in stride(from: 400, to: fixes.count, by: 500) {
            events += try await post(
                Self.body(fixes[start..<min(start + 500, fixes.count)]), client: client, base: base, token: phone
            ).count
        }
        #expect(events > 50)
        try await browser.wait(
            for: "document.querySelectorAll('#feed [data-event-id]').length > 50", timeout: 5,
            "the journey's events in the feed")
        try await Task.sleep(for: .milliseconds(1_200))  // one more poll of the tracks
        Self.save(try await browser.screenshot(), as: "live-page.png")

        // The bus ends at the map's edge: its label turns inward rather than being cut off.
        let labelInside =
            try await browser.script(
                """
                var l = document.querySelector('[data-label-device="bus"]').getBoundingClientRect();
                var m = document.querySelector('#map svg').getBoundingClientRect();
                return l.width > 0 && l.right <= m.right + 1 && l.left >= m.left - 1;
                """) as? Bool
        #expect(labelInside == true, "the bus's label within the map")
        // The live layer has a legend of its own: devices, tracks, events.
        #expect(try await browser.script("return document.querySelectorAll('#live-legend li').length;") as? Int == 5)

        // Reloading keeps the token for the session: no second question.
        try await browser.open(base + "/")
        try await browser.wait(
            for:
                "document.querySelectorAll('#map svg .regions [data-region-id]').length === 36 && document.getElementById('login').hidden",
            timeout: 15, "the map again without asking")
    }

    struct PostedEvent {
        var id: String
        var kind: String
    }

    private func post(_ body: String, client: HTTPClient, base: String, token: String) async throws -> [PostedEvent] {
        var request = HTTPClientRequest(url: base + "/v1/devices/bus/locations")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await client.execute(request, timeout: .seconds(30))
        let data = Data(try await response.body.collect(upTo: 16 << 20).readableBytesView)
        #expect(response.status == .ok, "\(String(decoding: data, as: UTF8.self))")
        let answer = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return (answer?["events"] as? [[String: Any]] ?? []).compactMap { event in
            guard let id = event["id"] as? String, let kind = event["kind"] as? String else { return nil }
            return PostedEvent(id: id, kind: kind)
        }
    }

    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    static func save(_ png: Data, as name: String) {
        let directory = TestData.packageRoot.appendingPathComponent(".build")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? png.write(to: directory.appendingPathComponent(name))
    }
}

/// The live page with a basemap: `map_tiles` pointing at a tile server on loopback.
@Suite(.serialized) struct LivePageTilesBrowserTests {
    @Test func basemapTilesFromTheConfiguredServer() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let tiles = try await TileServer.start()
        #expect(
            try await cli.run("regions", "apply", TestData.packageRoot.appendingPathComponent("regions").path).status
                == 0)
        let token = try await cli.run("tokens", "create", "--scope", "read", "--name", "viewer").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let config = try cli.write(
            "serve.json", #"{"map_tiles": "\#(tiles.template)", "map_tiles_attribution": "Tiles © test server"}"#)
        let (server, port) = try await cli.serve("--config", config)
        defer { if server.isRunning { server.terminate() } }
        let browser = try await WebDriver.start()
        do {
            try await browser.open("http://127.0.0.1:\(port)/")
            try await browser.type(token, into: try await browser.element("input[name=token]"))
            try await browser.click(try await browser.element("#login button[type=submit]"))
            try await browser.wait(
                for: "document.querySelectorAll('#map svg .basemap image').length > 0", timeout: 15, "basemap tiles")
            try await browser.wait(
                for: "/Tiles © test server/.test(document.getElementById('attribution').textContent)", timeout: 10,
                "the attribution")
            // The tiles asked for cover Limerick: at zoom z, x and y around (-8.63°, 52.65°).
            let expected =
                try await browser.script("return document.querySelectorAll('#map svg .basemap image').length;") as? Int
                ?? 0
            let deadline = Date().addingTimeInterval(10)
            while tiles.paths.count < expected, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
            let paths = tiles.paths
            #expect(paths.count >= expected, "the browser fetched every tile the page drew")
            #expect(!paths.isEmpty)
            for path in paths {
                let parts = path.dropFirst().replacingOccurrences(of: ".png", with: "").split(separator: "/").compactMap
                { Int($0) }
                guard parts.count == 3 else {
                    Issue.record("tile path \(path)")
                    continue
                }
                let (z, x, y) = (parts[0], parts[1], parts[2])
                let n = Double(1 << z)
                let lonLeft = Double(x) / n * 360 - 180
                let lonRight = Double(x + 1) / n * 360 - 180
                let latTop = atan(sinh(.pi * (1 - 2 * Double(y) / n))) * 180 / .pi
                let latBottom = atan(sinh(.pi * (1 - 2 * Double(y + 1) / n))) * 180 / .pi
                #expect(z >= 11 && z <= 16, "\(path)")
                #expect(
                    lonRight > -8.75 && lonLeft < -8.5 && latTop > 52.58 && latBottom < 52.72,
                    "tile \(path) is near Limerick")
            }
            LivePageBrowserTests.save(try await browser.screenshot(), as: "live-page-tiles.png")
        } catch {
            await browser.quit()
            await tiles.stop()
            throw error
        }
        await browser.quit()
        await tiles.stop()
    }
}

/// The HTML form of `render map` in the same real browser: hover details and zoom.
@Suite(.serialized) struct RenderedPageBrowserTests {
    @Test func hoverDetailsAndZoom() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let regions = TestData.packageRoot.appendingPathComponent("regions").path
        let trace = TestData.packageRoot.appendingPathComponent("samples/bus304_to_UL_2019-02-18.gpx").path
        let result = try await cli.run(
            "render", "map", "--regions", regions, "--trace", trace, "-o", cli.path("map.html"))
        #expect(result.status == 0, "\(result.stderr)")
        let browser = try await WebDriver.start()
        do {
            try await browser.open("file://" + cli.path("map.html"))
            try await browser.wait(
                for: "document.querySelectorAll('svg .regions [data-region-id]').length === 36", timeout: 10, "the map")
            // Pointing at an event marker shows its kind, time and visit.
            _ = try await browser.script(
                "document.querySelector('.events .event.enter').dispatchEvent(new PointerEvent('pointerover', {bubbles: true}));"
            )
            try await browser.wait(
                for:
                    "!document.getElementById('details').hidden && /enter event/.test(document.getElementById('details').textContent) && /visit_id/.test(document.getElementById('details').textContent)",
                timeout: 10, "the event's details")
            // Pointing at a region shows its properties, unknown ones included.
            _ = try await browser.script(
                "document.querySelector('.regions [data-region-id=\"limerick-304:8400B6071101\"]').dispatchEvent(new PointerEvent('pointerover', {bubbles: true}));"
            )
            try await browser.wait(
                for: "/stop_no/.test(document.getElementById('details').textContent)", timeout: 10,
                "the region's properties")
            // Zooming in scales the view and shows the labels that had no room.
            let hidden =
                try await browser.script(
                    "return Array.from(document.querySelectorAll('.labels text')).filter(function (t) { return getComputedStyle(t).display === 'none'; }).length;"
                ) as? Int ?? 0
            #expect(hidden > 0)
            for _ in 0..<4 { try await browser.click(try await browser.element("#zoom-in")) }
            try await browser.wait(
                for: "/scale\\(6\\.5/.test(document.querySelector('.viewport').getAttribute('transform'))", timeout: 10,
                "zoomed in 1.6⁴ times")
            let stillHidden =
                try await browser.script(
                    "return Array.from(document.querySelectorAll('.labels text')).filter(function (t) { return getComputedStyle(t).display === 'none'; }).length;"
                ) as? Int ?? -1
            #expect(stillHidden < hidden)
            LivePageBrowserTests.save(try await browser.screenshot(), as: "rendered-map-zoomed.png")
        } catch {
            await browser.quit()
            throw error
        }
        await browser.quit()
    }
}
