package import FencepostCore
import Foundation

extension LocationPayloads {
    /// Traccar Client's JSON body (its versions since mid-2025, which POST it to `/osmand`):
    /// `{"device_id": "…", "location": {"timestamp": RFC 3339, "coords": {"latitude",
    /// "longitude", "accuracy", "speed", "heading", "altitude"}, "is_moving", "odometer",
    /// "event", "battery": {"level", "is_charging"}, "activity": {"type"}, "mock"}}`, with
    /// `location` an array in the app's batch mode. A location with `"mock": true` (Android's mock
    /// provider) is counted as `mocked` and not ingested.
    ///
    /// Speeds are metres per second, and a negative speed or heading means unknown (the app
    /// reports iOS's and Android's -1). A body without the device, a location or its position
    /// or time is refused whole (400), naming what is missing; a value out of range is
    /// refused with the location's index (422).
    package static func traccarClient(_ body: JSONValue, now: Double = Date().timeIntervalSince1970)
        throws(LocationPayloadError) -> ProtocolMessages
    {
        guard case .object = body else {
            throw .malformed(
                "Traccar Client JSON: the body must be an object with device_id and location, not \(body.typeName)")
        }
        let device = try checkedDevice(try traccarDeviceID(body["device_id"], name: "device_id"))
        let locations: [JSONValue]
        switch body["location"] {
        case let location? where location.objectValue != nil: locations = [location]
        case .array(let items)?: locations = items
        case nil, .null?:
            throw .malformed("Traccar Client JSON: location is missing (an object, or an array in batch mode)")
        case let other?:
            throw .malformed("Traccar Client JSON: location must be an object or an array, not \(other.typeName)")
        }
        guard locations.count <= maximumFixes else { throw .tooManyFixes(limit: maximumFixes) }
        let times = FixTimeRange.live(now: now)
        var messages = ProtocolMessages()
        for (index, location) in locations.enumerated() {
            let fix = try traccarClientFix(location, index: index, device: device, times: times)
            // Android marks a position from a mock provider (a developer's tool, or an app
            // faking presence): not where the device is, so no event may rest on it. Counted,
            // not ingested.
            if location["mock"] == .bool(true) {
                messages.count("mocked")
                continue
            }
            messages.fixes.append(fix)
            messages.count("location")
            messages.countExtras(["battery", "activity", "is_moving", "event", "odometer"], in: location)
        }
        return messages
    }

    private static func traccarClientFix(_ location: JSONValue, index: Int, device: String, times: FixTimeRange)
        throws(LocationPayloadError) -> Fix
    {
        func missing(_ what: String) -> LocationPayloadError {
            .malformed("Traccar Client JSON: location \(index): \(what) is missing")
        }
        guard case .object = location else {
            throw .malformed("Traccar Client JSON: location \(index) must be an object, not \(location.typeName)")
        }
        guard let stamp = location["timestamp"], stamp != .null else { throw missing("timestamp") }
        guard let text = stamp.stringValue, let time = Timestamp.parse(text) else {
            throw invalid(index, "timestamp must be an RFC 3339 time, not \(stamp.stringValue ?? stamp.typeName)")
        }
        guard times.contains(time) else { throw invalid(index, "timestamp: " + times.refusal(of: time)) }
        guard let coords = location["coords"], coords != .null else { throw missing("coords") }
        guard case .object = coords else {
            throw .malformed("Traccar Client JSON: location \(index): coords must be an object, not \(coords.typeName)")
        }
        guard coords["latitude"] != nil else { throw missing("coords.latitude") }
        guard coords["longitude"] != nil else { throw missing("coords.longitude") }
        let speed = try optionalNumber(coords["speed"], "coords.speed", index: index)
        return Fix(
            device: device, time: time,
            lat: try coordinate(coords["latitude"], "coords.latitude", range: 90, index: index),
            lon: try coordinate(coords["longitude"], "coords.longitude", range: 180, index: index),
            accuracy: try checkedAccuracy(
                optionalNumber(coords["accuracy"], "coords.accuracy", index: index), "coords.accuracy", index: index),
            altitude: try optionalNumber(coords["altitude"], "coords.altitude", index: index),
            speed: speed.flatMap { $0 < 0 ? nil : $0 })
    }

    /// A device identifier that may come as a string or, from some clients, as a whole number.
    static func traccarDeviceID(_ value: JSONValue?, name: String) throws(LocationPayloadError) -> String {
        switch value {
        case .string(let text)?: return text
        case .number(let number)?:
            guard let whole = Int64(exactly: number) else {
                throw .malformed("\(name) must be a string or a whole number, not \(JSONValue.format(number))")
            }
            return String(whole)
        case nil, .null?: throw .malformed("\(name) (the device's identifier) is missing")
        case let other?: throw .malformed("\(name) must be a string, not \(other.typeName)")
        }
    }
}
