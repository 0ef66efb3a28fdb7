import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostIngest
import FencepostStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Live location ingest: our JSON batch, OwnTracks HTTP mode, the OsmAnd protocol (and Traccar
/// Client's JSON on the same path), Overland, and positions a Traccar server forwards, all
/// through the same ``LiveIngestor``. Every route checks, before anything is written, that the
/// token may post for each device of the request (``Caller/requirePost(devices:store:)``), and
/// answers only once the request's fixes are committed. Messages are counted per protocol and
/// type, and refusals per protocol (`/metrics`).
struct LocationsController {
    let auth: Authenticator
    /// Where group tokens' devices are looked up on the roster.
    let store: Store
    let ingestor: LiveIngestor
    /// What the live page draws of each device: the fixes of every committed request.
    /// Messages per protocol and type, and refusals per protocol.
    let metrics: ServiceMetrics
    /// The regions monitored sets are planned from.
    let planning: PlanningRegions
    /// `setWaypoints` answers to OwnTracks posts; nil when the config turns them off.
    let ownTracksWaypoints: OwnTracksWaypoints?
    /// Where OwnTracks `transition` messages go.
    let transitions: TransitionRecorder
    let maxBodyBytes: Int
    /// OwnTracks' encryption keys (the config's `mqtt.keys`), for `_type: encrypted` posts.
    var ownTracksKeys = OwnTracksKeys(secrets: [:])

    func addRoutes(to router: Router<FencepostRequestContext>) {
        let routes = router.authenticated(by: auth)
        routes.post("/v1/devices/:device/locations", use: counted("batch", postBatch))
        routes.post("/owntracks", use: counted("owntracks_http", postOwnTracks))
        // Apps that cannot set headers (OsmAnd, GPSLogger), or whose users paste one URL
        // (Overland, Traccar's forward.url): the token may come in the query, here only.
        let queryTokenRoutes = router.authenticated(by: auth, allowQueryToken: true)
        queryTokenRoutes.get("/osmand", use: counted("osmand", osmAnd))
        queryTokenRoutes.post("/osmand", use: osmAndOrTraccarClient)
        queryTokenRoutes.post("/overland", use: counted("overland", postOverland))
        queryTokenRoutes.post("/traccar", use: counted("traccar", postTraccarForward))
    }

    /// A handler whose refusals (a malformed or invalid payload, a device the token may not
    /// post for) are counted under `protocolName`.
    private func counted(
        _ protocolName: String,
        _ handler: @escaping @Sendable (Request, FencepostRequestContext) async throws -> Response
    ) -> @Sendable (Request, FencepostRequestContext) async throws -> Response {
        { [metrics] request, context in
            do {
                return try await handler(request, context)
            } catch let error as LocationPayloadError {
                metrics.recordRefusedMessage(protocol: protocolName)
                throw error
            } catch let error as TransitionRefusal {
                metrics.recordRefusedMessage(protocol: protocolName)
                throw error
            } catch let error as APIError where (400..<500).contains(error.status.code) {
                metrics.recordRefusedMessage(protocol: protocolName)
                throw error
            }
        }
    }

    /// `POST /osmand`: Traccar Client's JSON body when the request says it is JSON (or its body
    /// starts as a JSON object does), else OsmAnd's form parameters.
    @Sendable func osmAndOrTraccarClient(_ request: Request, context: FencepostRequestContext) async throws
        -> Response
    {
        let type = request.headers.firstValue(.contentType)?.lowercased() ?? ""
        guard !type.hasPrefix("application/x-www-form-urlencoded") else {
            return try await counted("osmand", osmAnd)(request, context)
        }
        let body = Array(buffer: try await request.collectBody(limit: maxBodyBytes))
        guard
            type.hasPrefix("application/json")
                || body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{")
        else {
            return try await counted("osmand", osmAnd)(request, context)
        }
        return try await counted("traccar_client") { _, context in
            let caller = try context.requireCaller()
            let messages = try LocationPayloads.traccarClient(try LocationPayloads.parse(body))
            try await caller.requirePost(devices: Set(messages.fixes.map(\.device)), store: store)
            try await ingest(messages, protocol: "traccar_client")
            return Response(status: .ok)
        }(request, context)
    }

    /// Overland: `{"locations": [GeoJSON Features]}` → `{"result":"ok"}` once committed (the
    /// app deletes a batch on that answer, and sends it again on any other). The device is
    /// each location's `device_id`, else the `device` parameter, else a device token's device.
    @Sendable func postOverland(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try LocationPayloads.parse(Array(buffer: try await request.collectBody(limit: maxBodyBytes)))
        let messages = try LocationPayloads.overland(
            body, fallbackDevice: request.query("device") ?? caller.confinedDevice)
        try await caller.requirePost(devices: Set(messages.fixes.map(\.device)), store: store)
        try await ingest(messages, protocol: "overland")
        return .json(#"{"result":"ok"}"#)
    }

    /// A position a Traccar server forwards (`forward.type` `json`), for `device.uniqueId`.
    @Sendable func postTraccarForward(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try LocationPayloads.parse(Array(buffer: try await request.collectBody(limit: maxBodyBytes)))
        let messages = try LocationPayloads.traccarForward(body)
        try await caller.requirePost(devices: Set(messages.fixes.map(\.device)), store: store)
        try await ingest(messages, protocol: "traccar")
        return .json("{}")
    }

    /// `{"fixes":[...]}` → `{"accepted":N,"dropped":{"reason":N},"events":[...]}`.
    @Sendable func postBatch(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        // Percent-decoded: `alice%2Fphone` is OwnTracks' `alice/phone`.
        let raw = try context.parameters.require("device")
        let device = raw.removingPercentEncoding ?? raw
        try await context.requireCaller().requirePost(devices: [device], store: store)
        let body = try await request.collectBody(limit: maxBodyBytes)
        let fixes = try LocationPayloads.batch(Array(buffer: body), device: device)
        let outcome = try await ingest(fixes)
        metrics.recordMessages(protocol: "batch", type: "location", count: fixes.count)
        return .json(try JSONValueEncoder.canonicalText(Summary(outcome)))
    }

    /// OwnTracks: the device is `user/device` from `X-Limit-U`/`X-Limit-D` (or the basic-auth
    /// user and the payload's `tid`); `transition` messages are the device's own enters and
    /// exits (``TransitionRecorder``). The app expects a JSON array back: empty, or holding the
    /// `setWaypoints` command when the device's monitored set has changed (``OwnTracksWaypoints``).
    @Sendable func postOwnTracks(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let user = request.headers.firstValue(.ownTracksUser) ?? Authenticator.basicUser(request)
        var body = try LocationPayloads.parse(Array(buffer: try await request.collectBody(limit: maxBodyBytes)))
        let deviceName = request.headers.firstValue(.ownTracksDevice)
        if body["_type"]?.stringValue == "encrypted", let user {
            body = try ownTracksKeys.decrypt(
                body, user: user, device: try LocationPayloads.ownTracksDevice(user: user, device: deviceName ?? user))
        }
        let device = try LocationPayloads.ownTracksDevice(
            user: user, device: deviceName ?? body["tid"]?.stringValue)
        try await caller.requirePost(devices: [device], store: store)
        let messages = try LocationPayloads.ownTracksMessages(body, device: device)
        do {
            _ = try await transitions.record(messages.transitions, device: device)
        } catch is TransitionRefusal {
            // OwnTracks keeps a message the server refuses and sends it again ahead of the
            // rest, so a transition of one of the phone's own waypoints (its "Home", no region
            // here) would stop its queue for good: counted and not written, as over MQTT.
            metrics.recordMessages(
                protocol: "owntracks_http", type: "transition_refused", count: messages.transitions.count)
        }
        try await ingest(messages, protocol: "owntracks_http")
        // Planned where the device is: its newest fix, else where it reported a transition
        // (leaving the re-plan circle is the phone asking again).
        let newest =
            messages.fixes.max(by: { $0.time < $1.time }).map { Position(lon: $0.lon, lat: $0.lat) }
            ?? messages.transitions.max(by: { $0.time < $1.time })?.position
        guard let ownTracksWaypoints, let newest else {
            return .json("[]")
        }
        let command = try await ownTracksWaypoints.command(for: device, at: newest, planning: planning)
        return .json(command.map { JSONValue.array([$0]).canonicalText() } ?? "[]")
    }

    /// OsmAnd / Traccar Client: one fix in the query (or a form body). The token may come as a
    /// `token` parameter, since these apps cannot set headers.
    @Sendable func osmAnd(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        var form: [String: String] = [:]
        if request.method == .post,
            request.headers.firstValue(.contentType)?.hasPrefix("application/x-www-form-urlencoded") == true
        {
            form = LocationPayloads.formParameters(Array(buffer: try await request.collectBody(limit: maxBodyBytes)))
        }
        // Parsed once (by the token check): the URI parses its whole query again on every lookup.
        let query = context.queryParameters(of: request)
        let parameter: (String) -> String? = { name in
            query[Substring(name)].flatMap { $0.isEmpty ? nil : String($0) } ?? form[name]
        }
        let fix = try LocationPayloads.osmAnd(parameter)
        try await caller.requirePost(devices: [fix.device], store: store)
        _ = try await ingest([fix])
        metrics.recordMessages(protocol: "osmand", type: "location")
        return Response(status: .ok)
    }

    /// Ingests a request's fixes.
    private func ingest(_ fixes: [Fix]) async throws -> BatchOutcome {
        try await ingestor.ingest(fixes)
    }

    /// Ingests the fixes of a protocol's messages (when there are any), then counts the
    /// messages by type and the extras they carried.
    private func ingest(_ messages: ProtocolMessages, protocol name: String) async throws {
        if !messages.fixes.isEmpty { _ = try await ingest(messages.fixes) }
        for (type, count) in messages.types { metrics.recordMessages(protocol: name, type: type, count: count) }
        for (extra, count) in messages.extras { metrics.recordExtras(protocol: name, extra: extra, count: count) }
    }

    /// What a batch of fixes did: the answer to a posted batch.
    struct Summary: Encodable {
        var accepted: Int
        var dropped: [String: Int]
        var events: [JSONValue]

        init(_ outcome: BatchOutcome) {
            accepted = outcome.fixesAccepted
            dropped = outcome.dropped.byRawValue
            events = outcome.events.map { EventExport.json(EventRow($0)) }
        }
    }
}
