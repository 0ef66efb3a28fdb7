package import FencepostCore
import Foundation

extension LocationPayloads {
    /// Overland's batch (the iOS app's receiver protocol): `{"locations": [GeoJSON Point
    /// Features whose properties carry "timestamp" (ISO 8601), "horizontal_accuracy",
    /// "altitude", "speed" (m/s), "device_id", "motion", "battery_level", …]}`; the `current`
    /// and `trip` members are summaries of what the batches carry, and are not read.
    ///
    /// The device is each location's `device_id`, or `fallbackDevice` (the request's `device`
    /// parameter, or a device token's device) when the app's Device ID setting is empty. A
    /// feature that is not a located time (a visit of newer versions: `"type": "visit"`) is
    /// counted by its type and skipped. Negative accuracies and speeds are Core Location's
    /// "unknown" (-1), taken as absent. Anything else malformed refuses the batch whole, with
    /// the location's index: Overland keeps a batch and sends it again until it is answered
    /// `{"result":"ok"}`.
    package static func overland(
        _ body: JSONValue, fallbackDevice: String?, now: Double = Date().timeIntervalSince1970
    ) throws(LocationPayloadError) -> ProtocolMessages {
        guard case .array(let locations)? = body["locations"] else {
            throw .malformed(#"Overland: the body must be an object with a "locations" array of GeoJSON Features"#)
        }
        guard locations.count <= maximumFixes else { throw .tooManyFixes(limit: maximumFixes) }
        let times = FixTimeRange.live(now: now)
        var messages = ProtocolMessages()
        for (index, feature) in locations.enumerated() {
            func malformed(_ what: String) -> LocationPayloadError {
                .malformed("Overland: location \(index): \(what)")
            }
            guard case .object = feature, let properties = feature["properties"], case .object = properties else {
                throw malformed("must be a GeoJSON Feature with properties")
            }
            if let type = properties["type"]?.stringValue, type != "location" {
                messages.count(type == "visit" ? "visit" : "other")
                continue
            }
            let device = try overlandDevice(properties["device_id"], fallback: fallbackDevice, index: index)
            guard feature["geometry"]?["type"]?.stringValue == "Point",
                case .array(let position)? = feature["geometry"]?["coordinates"], position.count >= 2
            else { throw malformed("geometry must be a Point with [longitude, latitude]") }
            guard let stamp = properties["timestamp"], stamp != .null else { throw malformed("timestamp is missing") }
            guard let text = stamp.stringValue, let time = Timestamp.parse(text) else {
                throw invalid(index, "timestamp must be an ISO 8601 time, not \(stamp.stringValue ?? stamp.typeName)")
            }
            guard times.contains(time) else { throw invalid(index, "timestamp: " + times.refusal(of: time)) }
            let accuracy = try optionalNumber(properties["horizontal_accuracy"], "horizontal_accuracy", index: index)
            let speed = try optionalNumber(properties["speed"], "speed", index: index)
            messages.fixes.append(
                Fix(
                    device: device, time: time,
                    lat: try coordinate(position[1], "latitude", range: 90, index: index),
                    lon: try coordinate(position[0], "longitude", range: 180, index: index),
                    accuracy: accuracy.flatMap { $0 < 0 ? nil : $0 },
                    altitude: try optionalNumber(properties["altitude"], "altitude", index: index),
                    speed: speed.flatMap { $0 < 0 ? nil : $0 }))
            messages.count("location")
            messages.countExtras(["battery_level", "battery_state", "motion", "activity", "wifi"], in: properties)
        }
        return messages
    }

    private static func overlandDevice(_ value: JSONValue?, fallback: String?, index: Int)
        throws(LocationPayloadError) -> String
    {
        if case .string(let text)? = value, !text.isEmpty { return try checkedDevice(text) }
        if let fallback { return try checkedDevice(fallback) }
        throw .malformed(
            "Overland: location \(index): device_id is empty; set a Device ID in Overland's settings, or add ?device=NAME to the receiver URL"
        )
    }
}
