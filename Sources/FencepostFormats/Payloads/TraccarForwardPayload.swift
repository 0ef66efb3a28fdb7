package import FencepostCore
import Foundation

extension LocationPayloads {
    /// A position a Traccar server forwards (`forward.type` `json`): `{"position": {"fixTime",
    /// "latitude", "longitude", "altitude", "speed" (knots), "course", "accuracy", "valid",
    /// "outdated", "attributes", …}, "device": {"uniqueId", "name", …}}`, one position a request.
    ///
    /// The device is `device.uniqueId` (the identifier the tracker reports, not Traccar's row
    /// id). A position Traccar marks `valid: false` (no satellite fix: the tracker repeats its
    /// last coordinates) or `outdated: true` (the last known position, sent again) is counted
    /// as `invalid` or `outdated` and not ingested. Traccar writes 0 for an accuracy it does
    /// not know, which is taken as absent.
    package static func traccarForward(_ body: JSONValue, now: Double = Date().timeIntervalSince1970)
        throws(LocationPayloadError) -> ProtocolMessages
    {
        guard let position = body["position"], case .object = position else {
            throw .malformed(#"Traccar forwarding: the body must be an object with "position" and "device" objects"#)
        }
        guard case .object = body["device"] else {
            throw .malformed(#"Traccar forwarding: "device" (with its uniqueId) is missing"#)
        }
        let device = try checkedDevice(try traccarDeviceID(body["device"]?["uniqueId"], name: "device.uniqueId"))
        var messages = ProtocolMessages()
        if position["valid"] == .bool(false) {
            messages.count("invalid")
            return messages
        }
        if position["outdated"] == .bool(true) {
            messages.count("outdated")
            return messages
        }
        guard let stamp = position["fixTime"], stamp != .null else {
            throw .malformed("Traccar forwarding: position.fixTime is missing")
        }
        guard let text = stamp.stringValue, let time = Timestamp.parse(text) else {
            throw invalid(0, "position.fixTime must be an ISO 8601 time, not \(stamp.stringValue ?? stamp.typeName)")
        }
        let times = FixTimeRange.live(now: now)
        guard times.contains(time) else { throw invalid(0, "position.fixTime: " + times.refusal(of: time)) }
        let accuracy = try optionalNumber(position["accuracy"], "position.accuracy", index: 0)
        let knots = try optionalNumber(position["speed"], "position.speed", index: 0)
        messages.fixes.append(
            Fix(
                device: device, time: time,
                lat: try coordinate(position["latitude"], "position.latitude", range: 90, index: 0),
                lon: try coordinate(position["longitude"], "position.longitude", range: 180, index: 0),
                accuracy: accuracy.flatMap { $0 > 0 ? $0 : nil },
                altitude: try optionalNumber(position["altitude"], "position.altitude", index: 0),
                speed: knots.flatMap { $0 < 0 ? nil : $0 * knot }))
        messages.count("location")
        if let attributes = position["attributes"] {
            messages.countExtras(["batteryLevel", "motion", "ignition", "odometer", "event"], in: attributes)
        }
        return messages
    }

    /// Metres per second in a knot (Traccar's and OsmAnd's unit of speed).
    static let knot = 1_852.0 / 3_600
}
