import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle

/// Events and visits: pages, exports and the live stream.
struct EventsController {
    let auth: Authenticator
    let store: Store
    let signal: ChangeSignal
    /// How often a live stream looks for other processes' writes (the service's own wake it).
    let pollInterval: Duration

    static let defaultLimit = 100
    static let maximumLimit = 1000

    func addRoutes(to router: Router<FencepostRequestContext>) {
        let routes = router.authenticated(by: auth)
        routes.get("/v1/events", use: events)
        routes.get("/v1/events/stream", use: stream)
        routes.get("/v1/visits", use: visits)
    }

    /// `{"events":[...],"next_cursor":...}`, or the selection as csv, jsonl, geojson or ics.
    /// `limit` and `cursor` page csv and jsonl as they page JSON (the next page's cursor is in the
    /// `X-Next-Cursor` header); geojson and ics are the whole selection.
    @Sendable func events(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let query = try await query(request, caller: caller)
        var format: ExportFormat?
        if let text = request.query("format"), text != "json" {
            guard let parsed = ExportFormat(rawValue: text) else {
                throw APIError.badRequest("format must be json, csv, jsonl, geojson or ics, not \(text)")
            }
            format = parsed
        }
        var limit: Int?
        if let text = request.query("limit") {
            guard let value = Int(text), value > 0 else {
                throw APIError.badRequest("limit must be a positive integer")
            }
            limit = value
        }
        var cursor: EventCursor?
        if let token = request.query("cursor") {
            guard let parsed = EventCursor(token: token) else {
                throw APIError.badRequest("cursor is not one this service gave out")
            }
            cursor = parsed
        }
        if let format {
            if format == .geojson || format == .ics, limit != nil || cursor != nil {
                throw APIError.badRequest(
                    "limit and cursor page json, csv and jsonl; \(format.rawValue) is the whole selection")
            }
            return try await export(format, query: query, zone: try Self.zone(request), after: cursor, limit: limit)
        }
        let pageSize = min(limit ?? Self.defaultLimit, Self.maximumLimit)
        let page = try await store.events(query, after: cursor, limit: pageSize)
        let next: JSONValue =
            page.count == pageSize
            ? page.last.map { .string(EventCursor(timeMs: $0.timeMs, id: $0.id).token) } ?? .null : .null
        let body = JSONValue.object(["events": .array(page.map { EventExport.json($0) }), "next_cursor": next])
        return .json(body.canonicalText())
    }

    /// csv and jsonl stream page by page (flat memory on any store), from `cursor` and at most
    /// `limit` events when given; geojson and ics are built whole before they are sent.
    private func export(
        _ format: ExportFormat, query: EventQuery, zone: TimeZone?, after start: EventCursor?, limit: Int?
    ) async throws -> Response {
        var headers: HTTPFields = [.contentType: format.contentType]
        switch format {
        case .csv, .jsonl:
            let store = self.store
            // With a limit, the page after it is known before the body starts: its cursor goes in
            // a header (a CSV has no place for it).
            if let limit, let next = try await Self.cursor(after: limit, from: start, query: query, store: store) {
                headers[HTTPField.Name("X-Next-Cursor")!] = next.token
            }
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    if format == .csv { try await writer.write(ByteBuffer(string: EventExport.csvHeader(zone: zone))) }
                    var cursor = start
                    var left = limit ?? .max
                    while left > 0 {
                        let size = min(2_000, left)
                        let page = try await store.events(query, after: cursor, limit: size)
                        var text = ""
                        for event in page {
                            text +=
                                format == .csv
                                ? EventExport.csvLine(event, zone: zone)
                                : EventExport.json(event, zone: zone).canonicalText() + "\n"
                        }
                        if !text.isEmpty { try await writer.write(ByteBuffer(string: text)) }
                        left -= page.count
                        guard page.count == size, let last = page.last else { break }
                        cursor = EventCursor(timeMs: last.timeMs, id: last.id)
                    }
                    try await writer.finish(nil)
                })
        case .geojson, .ics:
            var sink = StringSink()
            try await EventExport.write(format, query: query, zone: zone, from: store, to: &sink)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: sink.text)))
        }
    }

    /// The cursor after the `limit`th event from `start`, when an event follows it.
    private static func cursor(after limit: Int, from start: EventCursor?, query: EventQuery, store: Store)
        async throws -> EventCursor?
    {
        guard let last = try await store.eventCursor(query, after: start, offset: limit - 1) else { return nil }
        return try await store.eventCursor(query, after: last, offset: 0) == nil ? nil : last
    }

    /// `{"visits":[...]}` in enter-time order; `open=true` for open visits only.
    @Sendable func visits(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let scope = try await caller.readScope(asking: request.query("device"), store: store)
        var visits: [JSONValue] = []
        try await store.forEachVisit(
            openOnly: request.query("open") == "true", device: scope.device, region: request.query("region"),
            group: scope.group
        ) { visit in
            visits.append(visit.json)
        }
        return .json(JSONValue.object(["visits": .array(visits)]).canonicalText())
    }

    /// Server-Sent Events: each new event as `id: <seq>`, `event: <kind>`, `data: <json>`.
    /// A client that reconnects with `Last-Event-ID` gets what it missed; without one, the
    /// stream starts at the newest event. Ends when the client leaves or the service stops.
    @Sendable func stream(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let scope = try await caller.readScope(asking: request.query("device"), store: store)
        let start: Int64
        if let last = request.headers[HTTPField.Name("Last-Event-ID")!] ?? request.query("last_event_id") {
            guard let value = Int64(last), value >= 0 else {
                throw APIError.badRequest("Last-Event-ID must be an id this stream sent")
            }
            start = value
        } else {
            start = try await store.latestEventSeq()
        }
        let store = self.store
        let signal = self.signal
        let pollInterval = self.pollInterval
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: ": fencepost event stream\nretry: 2000\n\n"))
                var seq = start
                var quiet = Duration.zero
                // Ends with the client (a failed write), a store failure, or the service's shutdown,
                // which the stream notices within one poll interval.
                while !Task.isCancelled, !Task.isShuttingDownGracefully {
                    do {
                        let feed = try await store.eventFeed(
                            after: seq, device: scope.device, group: scope.group, limit: 500)
                        if feed.isEmpty {
                            if quiet >= .seconds(15) {
                                try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                                quiet = .zero
                            }
                            await signal.wait(timeout: pollInterval)
                            quiet += pollInterval
                            continue
                        }
                        var text = ""
                        for item in feed {
                            text +=
                                "id: \(item.seq)\nevent: \(item.event.kind)\ndata: \(EventExport.json(item.event).canonicalText())\n\n"
                        }
                        try await writer.write(ByteBuffer(string: text))
                        seq = feed.last!.seq
                        quiet = .zero
                    } catch {
                        break
                    }
                }
                try await writer.finish(nil)
            })
    }

    // MARK: - Parameters

    /// The events a request selects, within what its caller reads.
    func query(_ request: Request, caller: Caller) async throws -> EventQuery {
        if let kind = request.query("kind"), let problem = EventQuery.kindProblem(kind) {
            throw APIError.badRequest(problem)
        }
        let (since, until) = (try request.queryTime("since"), try request.queryTime("until"))
        let scope = try await caller.readScope(asking: request.query("device"), store: store)
        return EventQuery(
            since: since, until: until, device: scope.device, region: request.query("region"),
            kind: request.query("kind"), group: scope.group)
    }

    static func zone(_ request: Request) throws -> TimeZone? {
        guard let name = request.query("tz") else { return nil }
        guard let zone = TimeZone(identifier: name) else { throw APIError.badRequest("unknown time zone \(name)") }
        return zone
    }
}
