import FencepostCore
import FencepostFormats
import FencepostIngest
import FencepostStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Live location ingest: our JSON batch, OwnTracks HTTP mode and the OsmAnd (Traccar Client)
/// protocol, all through the same ``LiveIngestor``. Every route checks, before anything is
/// written, that the token may post for each device of the request (``Caller/requirePost(devices:store:)``).
struct LocationsController {
    let auth: Authenticator
    /// Where group tokens' devices are looked up on the roster.
    let store: Store
    let ingestor: LiveIngestor
    /// What the live page draws of each device: the fixes of every committed request.
    let recentTracks: RecentTracks
    /// Messages per protocol and type, and refusals per protocol.
    let metrics: ServiceMetrics
    let maxBodyBytes: Int
    /// OwnTracks' encryption keys (the config's `mqtt.keys`), for `_type: encrypted` posts.
    var ownTracksKeys = OwnTracksKeys(secrets: [:])

    func addRoutes(to router: Router<FencepostRequestContext>) {
        let routes = router.authenticated(by: auth)
        routes.post("/v1/devices/:device/locations", use: postBatch)
        routes.post("/owntracks", use: postOwnTracks)
        // OsmAnd clients cannot set headers: their token may come in the query, here only.
        let queryTokenRoutes = router.authenticated(by: auth, allowQueryToken: true)
        queryTokenRoutes.get("/osmand", use: osmAnd)
        queryTokenRoutes.post("/osmand", use: osmAnd)
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
        return .json(try JSONValueEncoder.canonicalText(Summary(outcome)))
    }

    /// OwnTracks: the device is `user/device` from `X-Limit-U`/`X-Limit-D` (or the basic-auth
    /// user and the payload's `tid`); the app expects a JSON array back.
    @Sendable func postOwnTracks(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let user = request.headers[HTTPField.Name("X-Limit-U")!] ?? Authenticator.basicUser(request)
        var body = try LocationPayloads.parse(Array(buffer: try await request.collectBody(limit: maxBodyBytes)))
        let deviceName = request.headers[HTTPField.Name("X-Limit-D")!]
        if body["_type"]?.stringValue == "encrypted", let user {
            body = try ownTracksKeys.decrypt(
                body, user: user, device: try LocationPayloads.ownTracksDevice(user: user, device: deviceName ?? user))
        }
        let device = try LocationPayloads.ownTracksDevice(
            user: user, device: deviceName ?? body["tid"]?.stringValue)
        try await caller.requirePost(devices: [device], store: store)
        let fixes = try LocationPayloads.ownTracks(body, device: device)
        if !fixes.isEmpty { _ = try await ingest(fixes) }
        return .json("[]")
    }

    /// OsmAnd / Traccar Client: one fix in the query (or a form body). The token may come as a
    /// `token` parameter, since these apps cannot set headers.
    @Sendable func osmAnd(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        var form: [String: String] = [:]
        if request.method == .post,
            request.headers[.contentType]?.hasPrefix("application/x-www-form-urlencoded") == true
        {
            form = LocationPayloads.formParameters(Array(buffer: try await request.collectBody(limit: maxBodyBytes)))
        }
        let parameter: (String) -> String? = { name in request.query(name) ?? form[name] }
        let fix = try LocationPayloads.osmAnd(parameter)
        try await caller.requirePost(devices: [fix.device], store: store)
        _ = try await ingest([fix])
        return Response(status: .ok)
    }

    /// Ingests a request's fixes and, once they are committed, adds them to the live tracks.
    private func ingest(_ fixes: [Fix]) async throws -> BatchOutcome {
        let outcome = try await ingestor.ingest(fixes)
        recentTracks.record(fixes)
        return outcome
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
