import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// A device's stored fixes: `GET /v1/devices/{id}/track?since&until&format=geojson|gpx|csv`,
/// streamed as the store reads them, an hour of fixes at a time (``Store/readTrack``): memory
/// stays flat whatever the range. Any token that reads the device may ask.
struct TrackController {
    let auth: Authenticator
    let store: Store

    func addRoutes(to router: Router<FencepostRequestContext>) {
        router.authenticated(by: auth).get("/v1/devices/:device/track", use: track)
    }

    @Sendable func track(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let device = try context.parameters.require("device")
        _ = try await context.requireCaller().readScope(asking: device, store: store)
        let format: TrackFormat
        if let text = request.query("format") {
            guard let parsed = TrackFormat(rawValue: text) else {
                throw APIError.badRequest("format must be geojson, gpx or csv, not \(text)")
            }
            format = parsed
        } else {
            format = .geojson
        }
        let since = try request.queryTime("since")
        let until = try request.queryTime("until")
        if let since, let until, since > until { throw APIError.badRequest("since is after until") }
        guard try await store.historyStats(device: device).fixes > 0 else {
            throw APIError.notFound("no stored fixes for device \(device)")
        }
        let store = self.store
        return Response(
            status: .ok, headers: [.contentType: format.contentType],
            body: ResponseBody { body in
                var writer = TrackWriter(format: format, device: device)
                try await body.write(ByteBuffer(string: writer.start))
                try await store.readTrack(device: device, since: since, until: until) { fixes in
                    try await body.write(ByteBuffer(string: writer.add(fixes)))
                }
                try await body.write(ByteBuffer(string: writer.end))
                try await body.finish(nil)
            })
    }
}
