import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Stops, trips and time sheets: `GET /v1/stops` and `GET /v1/trips` with `device`, `since`,
/// `until` (RFC 3339) and `format` (json, the default: an array; jsonl, csv, geojson; ics for
/// stops); `GET /v1/summary` with `by` (day, week, month), `tz`, `region`, `tag` too (json,
/// jsonl, csv). Each read first takes the stored fixes the devices' trackers have not taken
/// yet, so answers never lag the history. A device token reads its own device; a group token
/// its group's.
struct MovementController {
    let auth: Authenticator
    let store: Store

    func addRoutes(to router: Router<FencepostRequestContext>) {
        let routes = router.authenticated(by: auth)
        routes.get("/v1/stops", use: stops)
        routes.get("/v1/trips", use: trips)
        routes.get("/v1/summary", use: summary)
    }

    enum Format: String { case json, jsonl, csv, geojson, ics }

    @Sendable func stops(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let (query, format) = try await selection(
            request, context: context, formats: [.json, .jsonl, .csv, .geojson, .ics])
        var stops: [Stop] = []
        try await store.forEachStop(query) { stops.append($0) }
        var text = ""
        var features = GeoJSONExport()
        switch format {
        case .json: text = JSONValue.array(stops.map(MovementExport.json)).canonicalText() + "\n"
        case .jsonl: text = stops.map(MovementExport.jsonLine).joined()
        case .csv: text = MovementExport.stopCSVHeader + stops.map(MovementExport.csvLine).joined()
        case .geojson:
            text =
                GeoJSONExport.header + stops.map { features.feature(MovementExport.feature($0)) }.joined()
                + GeoJSONExport.footer
        case .ics:
            text = ICSExport.text(ICSExport.header + stops.flatMap(MovementExport.vevent) + ICSExport.footer)
        }
        return Self.response(text, format)
    }

    @Sendable func trips(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let (query, format) = try await selection(request, context: context, formats: [.json, .jsonl, .csv, .geojson])
        var trips: [Trip] = []
        try await store.forEachTrip(query) { trips.append($0) }
        let regions = try await store.regionsVisited(during: trips)
        let pairs = Array(zip(trips, regions))
        var text = ""
        var features = GeoJSONExport()
        switch format {
        case .json: text = JSONValue.array(pairs.map { MovementExport.json($0, regions: $1) }).canonicalText() + "\n"
        case .jsonl: text = pairs.map { MovementExport.jsonLine($0, regions: $1) }.joined()
        case .csv: text = MovementExport.tripCSVHeader + pairs.map { MovementExport.csvLine($0, regions: $1) }.joined()
        case .geojson:
            text =
                GeoJSONExport.header
                + pairs.map { features.feature(MovementExport.feature($0, regions: $1)) }.joined()
                + GeoJSONExport.footer
        case .ics: break
        }
        return Self.response(text, format)
    }

    @Sendable func summary(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        // The time sheet brings the devices' trips up to date itself (when it shows movement).
        let (query, format) = try await selection(
            request, context: context, formats: [.json, .jsonl, .csv], updatingMovement: false)
        var period = SummaryPeriod.day
        if let text = request.query("by") {
            guard let parsed = SummaryPeriod(rawValue: text) else {
                throw APIError.badRequest("by must be day, week or month, not \(text)")
            }
            period = parsed
        }
        let name = request.query("tz") ?? "UTC"
        guard let zone = TimeZone(identifier: name) else { throw APIError.badRequest("tz: unknown time zone \(name)") }
        let (rows, _) = try await TimeSheetQuery(
            period: period, zone: zone, window: (query.since ?? -.infinity)..<(query.until ?? .infinity),
            device: query.device, group: query.group, region: request.query("region"), tag: request.query("tag")
        ).rows(from: store)
        let export = TimeSheetExport(zone: zone)
        let text: String
        switch format {
        case .jsonl: text = rows.map { export.json($0).canonicalText() + "\n" }.joined()
        case .csv: text = TimeSheetExport.csvHeader + rows.map(export.csvLine).joined()
        default: text = JSONValue.array(rows.map(export.json)).canonicalText() + "\n"
        }
        return Self.response(text, format)
    }

    /// The query the request and its token allow, after the devices' stops are brought up to date.
    private func selection(
        _ request: Request, context: FencepostRequestContext, formats: [Format], updatingMovement: Bool = true
    ) async throws -> (MovementQuery, Format) {
        let scope = try await context.requireCaller().readScope(asking: request.query("device"), store: store)
        var format = Format.json
        if let text = request.query("format") {
            guard let parsed = Format(rawValue: text), formats.contains(parsed) else {
                throw APIError.badRequest(
                    "format must be \(formats.map(\.rawValue).joined(separator: ", ")), not \(text)")
            }
            format = parsed
        }
        let since = try request.queryTime("since")
        let until = try request.queryTime("until")
        if let since, let until, since > until { throw APIError.badRequest("since is after until") }
        if updatingMovement { try await store.updateMovement(of: scope.device) }
        return (MovementQuery(device: scope.device, group: scope.group, since: since, until: until), format)
    }

    private static func response(_ text: String, _ format: Format) -> Response {
        let type: String
        switch format {
        case .json: type = "application/json"
        case .jsonl: type = ExportFormat.jsonl.contentType
        case .csv: type = ExportFormat.csv.contentType
        case .geojson: type = ExportFormat.geojson.contentType
        case .ics: type = ExportFormat.ics.contentType
        }
        return Response(
            status: .ok, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
