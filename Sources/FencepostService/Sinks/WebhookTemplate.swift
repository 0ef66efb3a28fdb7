package import FencepostCore
import Foundation

/// A webhook body made from the event (`"template"`), so that ntfy, Telegram's Bot API,
/// Pushover, Slack or Matrix take events as they are: any JSON whose strings may hold
/// `{{placeholder}}`s, filled in per event. `{{local_time}}` is the event's time in the
/// webhook's `template_tz` (default UTC).
package struct WebhookTemplate: Sendable, Equatable {
    package var body: JSONValue
    package var zone: String

    package static let placeholders = [
        "id", "kind", "device", "device_name", "region", "region_name", "time", "local_time", "lat", "lon", "flags",
        "visit_id", "source",
    ]

    package init(body: JSONValue, zone: String = "UTC") {
        self.body = body
        self.zone = zone
    }

    /// The names of the event's region and device, as the store has them when it is sent.
    struct Names: Sendable {
        var regions: [String: String] = [:]
        var devices: [String: String] = [:]
    }

    /// The body for one event.
    func render(_ event: EventRow, names: Names) -> JSONValue {
        let values = Self.values(of: event, names: names, zone: zone)
        return Self.fill(body, with: values)
    }

    /// The placeholders of `text` no template knows.
    static func unknownPlaceholders(in value: JSONValue) -> [String] {
        switch value {
        case .string(let text):
            return names(in: text).filter { !placeholders.contains($0) }
        case .array(let items):
            return items.flatMap(unknownPlaceholders)
        case .object(let members):
            return members.keys.sorted().flatMap { unknownPlaceholders(in: members[$0] ?? .null) }
        case .null, .bool, .number:
            return []
        }
    }

    /// `text` with each known `{{name}}` replaced by its value (`escape` applied to it).
    static func fill(_ text: String, with values: [String: String], escape: (String) -> String = { $0 }) -> String {
        var result = ""
        var rest = Substring(text)
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            let name = String(rest[open.upperBound..<close.lowerBound]).trimmingCharacters(in: .whitespaces)
            result += rest[..<open.lowerBound]
            result += values[name].map(escape) ?? String(rest[open.lowerBound..<close.upperBound])
            rest = rest[close.upperBound...]
        }
        return result + rest
    }

    // MARK: - Pieces

    private static func fill(_ value: JSONValue, with values: [String: String]) -> JSONValue {
        switch value {
        case .string(let text): .string(fill(text, with: values))
        case .array(let items): .array(items.map { fill($0, with: values) })
        case .object(let members): .object(members.mapValues { fill($0, with: values) })
        case .null, .bool, .number: value
        }
    }

    private static func names(in text: String) -> [String] {
        var found: [String] = []
        var rest = Substring(text)
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            found.append(String(rest[open.upperBound..<close.lowerBound]).trimmingCharacters(in: .whitespaces))
            rest = rest[close.upperBound...]
        }
        return found
    }

    static func values(of event: EventRow, names: Names, zone: String) -> [String: String] {
        let region = event.region ?? ""
        return [
            "id": event.id, "kind": event.kind, "device": event.device,
            "device_name": names.devices[event.device] ?? event.device,
            "region": region, "region_name": names.regions[region] ?? region,
            "time": event.time, "local_time": localTime(event.timeMs, zone: zone),
            "lat": event.lat.map { JSONValue.format($0) } ?? "", "lon": event.lon.map { JSONValue.format($0) } ?? "",
            "flags": event.flags.joined(separator: ","), "visit_id": event.visitID ?? "", "source": event.source,
        ]
    }

    /// `2025-06-01 08:00` in `zone`.
    private static func localTime(_ milliseconds: Int64, zone: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: zone) ?? TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1_000))
    }
}
