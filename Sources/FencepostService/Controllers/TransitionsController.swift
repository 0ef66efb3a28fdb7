import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation
import Hummingbird
import NIOCore

/// `POST /v1/devices/{device}/transitions`: enters and exits an app's own geofencing reported,
/// for apps other than OwnTracks. The token must be able to post for the device (its device
/// token, its group's, an admin's). Each report is an event flagged `device`, merged with the
/// server's events into one visit per stay (``StayMerge``); the answer, once on disk, holds the
/// request's events as stored, each with its merged visit.
struct TransitionsController {
    let auth: Authenticator
    let store: Store
    let transitions: TransitionRecorder
    let metrics: ServiceMetrics
    let maxBodyBytes: Int
    static let protocolName = "transitions"

    func addRoutes(to router: Router<FencepostRequestContext>) {
        router.authenticated(by: auth).post("/v1/devices/:device/transitions", use: post)
    }

    /// `{"region","kind","time","accuracy"}` or an array → `{"accepted": N, "events": [...]}`.
    @Sendable func post(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        do {
            let raw = try context.parameters.require("device")
            let device = try LocationPayloads.checkedDevice(raw.removingPercentEncoding ?? raw)
            try await context.requireCaller().requirePost(devices: [device], store: store)
            let body = try LocationPayloads.parse(Array(buffer: try await request.collectBody(limit: maxBodyBytes)))
            let reported = try TransitionPayloads.plain(body)
            let events = try await transitions.record(reported, device: device)
            metrics.recordMessages(protocol: Self.protocolName, type: "transition", count: reported.count)
            return .json(
                JSONValue.object([
                    "accepted": .number(Double(reported.count)),
                    "events": .array(events.map { EventExport.json($0) }),
                ]).canonicalText())
        } catch let error as TransitionRefusal {
            metrics.recordRefusedMessage(protocol: Self.protocolName)
            throw error
        } catch let error as LocationPayloadError {
            metrics.recordRefusedMessage(protocol: Self.protocolName)
            throw error
        }
    }
}
