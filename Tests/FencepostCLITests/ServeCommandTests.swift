import AsyncHTTPClient
import FencepostCore
import FencepostTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

struct StreamedEvent: Sendable {
    var id: String
    var kind: String
}

/// `fencepost serve` as a real process on 127.0.0.1: phones' protocols in, events out.
@Suite("fencepost serve, end to end", .serialized)
struct ServeCommandTests {
    static let region = #"""
        {"type":"FeatureCollection","features":[{"type":"Feature","id":"home",
         "geometry":{"type":"Point","coordinates":[8.0,47.0]},"properties":{"radius":100}}]}
        """#

    /// 13 fixes a minute apart, due north from 600 m south of home to 600 m north of it.
    static let walk = (0...12).map { step in
        (time: 1_750_000_000 + step * 60, lat: 46.9946 + Double(step) * 0.0009, lon: 8.0)
    }

    @Test(
        "OwnTracks and OsmAnd posts that cross a region come back as enter and exit on the SSE stream and /v1/events; SIGTERM stops it cleanly"
    )
    func ownTracksAndOsmAndThroughTheStream() async throws {
        let binary = try FencepostBinary()
        defer { binary.cleanUp() }
        #expect(try await binary.run("regions", "apply", binary.write("regions/home.geojson", Self.region)).status == 0)
        let token = try await binary.run("tokens", "create", "--scope", "admin", "--name", "test").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("fp_"))
        let (server, port) = try await binary.serve()
        defer { if server.isRunning { server.terminate() } }
        let base = "http://127.0.0.1:\(port)"
        let client = HTTPClient(eventLoopGroupProvider: .singleton)

        do {
            // Open the stream first: it starts at the newest event, so it shows only what follows.
            var streamRequest = HTTPClientRequest(url: base + "/v1/events/stream")
            streamRequest.headers.add(name: "Authorization", value: "Bearer \(token)")
            let stream = try await client.execute(streamRequest, timeout: .seconds(30))
            #expect(stream.status.code == 200)
            let reader = Task { try await Self.readEvents(stream, count: 4) }

            for (index, fix) in Self.walk.enumerated() {
                var request = HTTPClientRequest(url: base + "/owntracks")
                request.method = .POST
                request.headers.add(
                    name: "Authorization", value: "Basic " + Data("alice:\(token)".utf8).base64EncodedString())
                request.headers.add(name: "X-Limit-D", value: "phone")
                request.body = .bytes(
                    ByteBuffer(
                        string:
                            #"{"_type":"location","lat":\#(fix.lat),"lon":\#(fix.lon),"tst":\#(fix.time),"acc":5,"tid":"ph"}"#
                    ))
                let response = try await client.execute(request, timeout: .seconds(10))
                #expect(response.status.code == 200)
                // A JSON array: the first holds the phone's waypoints (setWaypoints), then [].
                let answer = String(buffer: try await response.body.collect(upTo: 1 << 16))
                let commands = try JSONParser.parse(Array(answer.utf8)).arrayValue
                #expect(commands?.count == (index == 0 ? 1 : 0), "\(answer)")
            }
            for fix in Self.walk {
                let query = "id=bus&lat=\(fix.lat)&lon=\(fix.lon)&timestamp=\(fix.time)&accuracy=5&token=\(token)"
                let response = try await client.execute(
                    HTTPClientRequest(url: base + "/osmand?" + query), timeout: .seconds(10))
                #expect(response.status.code == 200)
            }

            let streamed = try await withThrowingTaskGroup(of: [StreamedEvent].self) { group in
                group.addTask { try await reader.value }
                group.addTask {
                    try await Task.sleep(for: .seconds(20))
                    reader.cancel()
                    return []
                }
                let first = try await group.next()!
                group.cancelAll()
                return first
            }
            #expect(streamed.map(\.kind).sorted() == ["enter", "enter", "exit", "exit"])

            // Reconnecting with Last-Event-ID resumes after that event.
            var resume = HTTPClientRequest(url: base + "/v1/events/stream")
            resume.headers.add(name: "Authorization", value: "Bearer \(token)")
            resume.headers.add(name: "Last-Event-ID", value: try #require(streamed.first?.id))
            let resumed = try await Self.readEvents(try await client.execute(resume, timeout: .seconds(30)), count: 3)
            #expect(resumed.map(\.id) == streamed.dropFirst().map(\.id))

            var eventsRequest = HTTPClientRequest(url: base + "/v1/events?region=home")
            eventsRequest.headers.add(name: "Authorization", value: "Bearer \(token)")
            let events = try await client.execute(eventsRequest, timeout: .seconds(10))
            let body = String(buffer: try await events.body.collect(upTo: 1 << 20))
            #expect(body.components(separatedBy: #""kind":"enter""#).count - 1 == 2)
            #expect(body.contains(#""device":"alice/phone""#) && body.contains(#""device":"bus""#))
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()

        server.terminate()  // SIGTERM: graceful shutdown
        try await FencepostBinary.waitForExit(server)
        #expect(server.terminationStatus == 0)
        // What the service wrote is the CLI's to read.
        let exported = try await binary.run("events", "export", "--format", "csv", "--region", "home")
        #expect(exported.stdout.split(separator: "\n").count == 5)
    }

    /// Reads Server-Sent Events until `count` have come: each one's `id:` and `event:`.
    static func readEvents(_ response: HTTPClientResponse, count: Int) async throws -> [StreamedEvent] {
        var text = ""
        var events: [StreamedEvent] = []
        for try await chunk in response.body {
            text += String(buffer: chunk)
            events = text.components(separatedBy: "\n\n").compactMap { block in
                let lines = block.split(separator: "\n")
                guard let id = lines.first(where: { $0.hasPrefix("id: ") }),
                    let kind = lines.first(where: { $0.hasPrefix("event: ") })
                else {
                    return nil
                }
                return StreamedEvent(id: String(id.dropFirst(4)), kind: String(kind.dropFirst(7)))
            }
            if events.count >= count { break }
        }
        return events
    }
}
