import FencepostCore
import FencepostFormats
import FencepostRender
import FencepostStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// The live page at `/`: a map of the regions with each device's last position and recent
/// track, the event stream as it happens, open visits and a region's details on click.
///
/// The page and its scripts are compiled into the binary and load nothing from elsewhere (a
/// basemap only when `map_tiles` is configured). The page itself needs no token; it asks for
/// one, keeps it in the tab's session storage and sends it in the `Authorization` header of
/// every call (the event stream is read with `fetch`, not `EventSource`, which cannot send
/// headers): the token never appears in a URL.
struct LiveController {
    let auth: Authenticator
    let store: Store
    let tracks: LiveTracks
    let mapTiles: ServiceConfiguration.MapTiles?
    private let mapCache = MapCache()

    init(auth: Authenticator, store: Store, mapTiles: ServiceConfiguration.MapTiles?) {
        self.auth = auth
        self.store = store
        self.tracks = LiveTracks(store: store)
        self.mapTiles = mapTiles
    }

    func addRoutes(to router: Router<FencepostRequestContext>) {
        router.get("/", use: page)
        router.get("/assets/live.js") { _, _ in Self.asset(LivePage.script, type: "text/javascript; charset=utf-8") }
        router.get("/assets/map.js") { _, _ in Self.asset(MapScript.panZoom, type: "text/javascript; charset=utf-8") }
        router.get("/assets/live.css") { _, _ in Self.asset(LivePage.style, type: "text/css; charset=utf-8") }
        let routes = router.authenticated(by: auth)
        routes.get("/v1/live/map.svg", use: map)
        routes.get("/v1/live/snapshot", use: snapshot)
        routes.get("/v1/live/tracks", use: trackChanges)
    }

    @Sendable func page(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"]
        headers[HTTPField.Name("Content-Security-Policy")!] = contentSecurityPolicy
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: LivePage.html)))
    }

    /// Scripts and styles only from this service; images also from the tile server, if any.
    var contentSecurityPolicy: String {
        let tiles = mapTiles.flatMap {
            URL(string: $0.url.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: ""))
        }
        .flatMap { url in
            url.scheme.flatMap { scheme in url.host.map { "\(scheme)://\($0)\(url.port.map { ":\($0)" } ?? "")" } }
        }
        return
            "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:\(tiles.map { " " + $0 } ?? ""); "
            + "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The regions drawn by the same renderer as `render map`, cached until they change; for a
    /// group token, the regions it reads (``GroupTenancy/sees(_:)``).
    @Sendable func map(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let tenancy = try await context.requireCaller().tenancy(store: store)
        // The roster is part of what a tenant sees: a change of it bumps the revision too.
        let revision = try await store.regionsRevision()
        let svg = try await mapCache.svg(revision: revision, group: tenancy?.group) {
            let regions = try await store.monitoredRegions().map(\.region).filter { tenancy?.sees($0) ?? true }
            let renderer = MapRenderer(options: .init(width: 1200, padding: 40, zoomableLabels: true))
            return renderer.svg(MapScene(regions: regions))
        }
        return Response(
            status: .ok, headers: [.contentType: "image/svg+xml; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: svg)))
    }

    /// Where the page starts: the most recently seen devices' last positions and recent tracks,
    /// the latest events, and the stream positions to follow from.
    @Sendable func snapshot(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let own = caller.confinedDevice
        let members = try await caller.tenancy(store: store)?.members
        let readable: @Sendable (String) -> Bool = { device in
            (own == nil || device == own) && (members?.contains(device) ?? true)
        }
        let latest = try await store.latestEventSeq()
        let recent = try await store.eventFeed(
            after: max(0, latest - 2_000), device: own, group: caller.confinedGroup, limit: 2_000
        ).suffix(50)
        let (trackSeq, changed) = try await tracks.changes(after: 0, limit: 500, where: readable)
        var devices: [String: [String: JSONValue]] = [:]
        for (device, points) in changed { devices[device] = ["device": .string(device), "track": Self.json(points)] }
        let anchors = try await store.deviceAnchors().filter { readable($0.key) }
        // The most recently seen devices' last positions; the page needs no thousands of them.
        for (device, _) in anchors.sorted(by: { $0.value > $1.value }).prefix(500) {
            guard let last = try await store.deviceState(device)?.monitor.lastFix else { continue }
            devices[device, default: ["device": .string(device), "track": .array([])]]["last"] = .object([
                "lat": .number(last.lat), "lon": .number(last.lon),
                "time": .string(Timestamp.format(seconds: last.time)),
            ])
        }
        let tiles: JSONValue =
            mapTiles.map { .object(["url": .string($0.url), "attribution": .string($0.attribution ?? "")]) } ?? .null
        let body = JSONValue.object([
            "seq": .number(Double(latest)), "tracks_seq": .number(Double(trackSeq)),
            "events": .array(recent.map { EventExport.json($0.event) }),
            "devices": .array(devices.keys.sorted().map { .object(devices[$0]!) }),
            "map_tiles": tiles, "scope": .string(Self.scopeName(caller)),
        ])
        return .json(body.canonicalText())
    }

    /// The tracks that moved since `after`, the `tracks_seq` of the answer before (the page
    /// polls this about once a second; see ``LiveTracks``).
    @Sendable func trackChanges(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        // Up to the end of year 9999: the cursor is compared with stored RFC 3339 text, which
        // has four-digit years.
        guard let after = Int64(request.query("after") ?? "0"), after >= 0, after <= 253_402_300_799_999 else {
            throw APIError.badRequest("after must be the tracks_seq of an answer before, or 0")
        }
        let own = caller.confinedDevice
        let members = try await caller.tenancy(store: store)?.members
        let (seq, changed) = try await tracks.changes(after: after) { device in
            (own == nil || device == own) && (members?.contains(device) ?? true)
        }
        let body = JSONValue.object([
            "tracks_seq": .number(Double(seq)),
            "devices": .array(changed.map { .object(["device": .string($0.device), "track": Self.json($0.points)]) }),
        ])
        return .json(body.canonicalText())
    }

    /// Whose data the page shows: `all`, `device:ID` or `group:NAME`.
    static func scopeName(_ caller: Caller) -> String {
        if let device = caller.confinedDevice { return "device:\(device)" }
        if let group = caller.confinedGroup { return "group:\(group)" }
        return "all"
    }

    /// `[[lon, lat, "time"], …]`.
    static func json(_ points: [TrackPoint]) -> JSONValue {
        .array(points.map { .array([.number($0.lon), .number($0.lat), .string(Timestamp.format(seconds: $0.time))]) })
    }
}

/// The map of the regions as last drawn, with the regions revision it shows and the group
/// whose view it is (nil: every region).
private final class MapCache: Sendable {
    private let cached = Mutex<(revision: Int64, group: String?, svg: String)?>(nil)

    func svg(revision: Int64, group: String?, draw: () async throws -> String) async throws -> String {
        if let hit = cached.withLock({ $0 }), hit.revision == revision, hit.group == group { return hit.svg }
        let svg = try await draw()
        cached.withLock { $0 = (revision, group, svg) }
        return svg
    }
}
