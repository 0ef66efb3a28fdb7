import FencepostCore
import Foundation

/// Turns the bodies the service accepts into fixes, refusing a whole request when any of its
/// fixes is malformed (so a bad request writes nothing), with the fix's index and the reason.
enum LocationPayloads {
    /// Our batch: `{"fixes":[{"time":"RFC 3339","lat":..,"lon":..,"accuracy":..}, ...]}`;
    /// `time` may also be seconds since the epoch; `altitude` and `speed` are optional.
    ///
    /// Read member by member (no tree of the whole body: this is the service's hottest path).
    /// As with a tree, the whole body must be valid JSON before any fix is judged, so a syntax
    /// error anywhere is a 400 even after an invalid fix.
    static func batch(_ bytes: [UInt8], device: String) throws -> [Fix] {
        var json = JSONScanner(bytes)
        var fixes: [Fix]?
        var firstInvalid: (any Error)?
        do {
            if json.nextKind() == .object {
                try json.enterObject()
                while let key = try json.nextMember() {
                    guard key == "fixes", json.nextKind() == .array else {
                        _ = try json.readValue()
                        if key == "fixes" { fixes = nil }  // as with a tree, the last "fixes" counts
                        continue
                    }
                    (fixes, firstInvalid) = ([], nil)
                    try json.enterArray()
                    var index = 0
                    while try json.nextItem() {
                        do {
                            fixes!.append(try fix(&json, index: index, device: device))
                        } catch let error as JSONSyntaxError {
                            throw error
                        } catch {
                            firstInvalid = firstInvalid ?? error
                        }
                        index += 1
                    }
                }
            } else {
                _ = try json.readValue()
            }
            try json.finish()
        } catch let error as JSONSyntaxError {
            throw APIError.badRequest("the body is not valid JSON: \(error)")
        }
        guard let fixes else { throw APIError.badRequest(#"the body must be an object with a "fixes" array"#) }
        if let firstInvalid { throw firstInvalid }
        return fixes
    }

    /// One fix of a batch, read from the scanner; a malformed one throws `invalid_fix` after its
    /// value has been read whole, so the caller can go on checking the rest of the body.
    private static func fix(_ json: inout JSONScanner, index: Int, device: String) throws -> Fix {
        guard json.nextKind() == .object else {
            throw invalid(index, "a fix must be an object, not \(try json.readValue().typeName)")
        }
        var time, lat, lon, accuracy, altitude, speed: JSONValue?
        try json.enterObject()
        // Names compared as bytes: a String per member was a tenth of a request's handling.
        while let name = try json.nextMemberUTF8() {
            let value = try json.readValue()
            if name.elementsEqual("time".utf8) {
                time = value
            } else if name.elementsEqual("lat".utf8) {
                lat = value
            } else if name.elementsEqual("lon".utf8) {
                lon = value
            } else if name.elementsEqual("accuracy".utf8) {
                accuracy = value
            } else if name.elementsEqual("altitude".utf8) {
                altitude = value
            } else if name.elementsEqual("speed".utf8) {
                speed = value
            }
        }
        let seconds: Double
        switch time {
        case .string(let text)?:
            guard let parsed = Timestamp.parse(text) else { throw invalid(index, "time is not an RFC 3339 time: \(text)") }
            seconds = parsed
        case .number(let number)? where number.isFinite:
            seconds = number
        case nil, .null?:
            throw invalid(index, "time is missing")
        case let other?:
            throw invalid(index, "time must be an RFC 3339 string, not \(other.typeName)")
        }
        return Fix(
            device: device, time: seconds,
            lat: try coordinate(lat, "lat", range: 90, index: index),
            lon: try coordinate(lon, "lon", range: 180, index: index),
            accuracy: try optionalNumber(accuracy, "accuracy", index: index),
            altitude: try optionalNumber(altitude, "altitude", index: index),
            speed: try optionalNumber(speed, "speed", index: index))
    }

    /// An OwnTracks HTTP-mode payload: one JSON object. Only `_type: location` carries a fix;
    /// other types (transition, waypoint, lwt, card…) are accepted and ignored.
    static func ownTracks(_ body: JSONValue, device: String) throws -> [Fix] {
        let messages = body.arrayValue ?? [body]
        return try messages.enumerated().compactMap { index, message in
            guard message["_type"]?.stringValue == "location" else { return nil }
            guard case .number(let tst)? = message["tst"], tst.isFinite else { throw invalid(index, "tst (epoch seconds) is missing") }
            return Fix(
                device: device, time: tst,
                lat: try coordinate(message["lat"], "lat", range: 90, index: index),
                lon: try coordinate(message["lon"], "lon", range: 180, index: index),
                accuracy: try optionalNumber(message["acc"], "acc", index: index),
                altitude: try optionalNumber(message["alt"], "alt", index: index),
                // OwnTracks reports velocity in km/h.
                speed: try optionalNumber(message["vel"], "vel", index: index).map { $0 / 3.6 })
        }
    }

    /// The OsmAnd / Traccar Client protocol: one fix in query (or form) parameters.
    /// `timestamp` is epoch seconds, epoch milliseconds, or an RFC 3339 time.
    static func osmAnd(_ parameter: (String) -> String?) throws -> Fix {
        guard let device = parameter("id") ?? parameter("deviceid") else { throw APIError.badRequest("id (the device) is missing") }
        func number(_ name: String) throws -> Double? {
            guard let text = parameter(name) else { return nil }
            guard let value = Double(text), value.isFinite else { throw APIError.badRequest("\(name) is not a number: \(text)") }
            return value
        }
        guard let lat = try number("lat"), let lon = try number("lon") else { throw APIError.badRequest("lat and lon are required") }
        guard abs(lat) <= 90, abs(lon) <= 180 else { throw APIError.badRequest("lat/lon out of range: \(lat), \(lon)") }
        guard let stamp = parameter("timestamp") else { throw APIError.badRequest("timestamp is missing") }
        let time: Double
        if let epoch = Double(stamp), epoch.isFinite {
            time = epoch > 100_000_000_000 ? epoch / 1000 : epoch
        } else if let parsed = Timestamp.parse(stamp) {
            time = parsed
        } else {
            throw APIError.badRequest("timestamp is neither epoch seconds nor an RFC 3339 time: \(stamp)")
        }
        // OsmAnd sends speed in knots.
        return Fix(
            device: device, time: time, lat: lat, lon: lon, accuracy: try number("accuracy") ?? number("hdop"),
            altitude: try number("altitude"), speed: try number("speed").map { $0 * 0.514444 })
    }

    // MARK: - Pieces

    /// A JSON body, or 400.
    static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw APIError.badRequest("the body is not valid JSON: \(error)")
        }
    }

    private static func invalid(_ index: Int, _ reason: String) -> APIError {
        APIError(.unprocessableContent, "invalid_fix", "fix \(index): \(reason); nothing of this request was written")
    }

    private static func coordinate(_ value: JSONValue?, _ name: String, range: Double, index: Int) throws -> Double {
        guard case .number(let number)? = value else {
            throw invalid(index, value == nil ? "\(name) is missing" : "\(name) must be a number, not \(value!.typeName)")
        }
        guard number.isFinite, abs(number) <= range else { throw invalid(index, "\(name) out of range: \(number)") }
        return number
    }

    private static func optionalNumber(_ value: JSONValue?, _ name: String, index: Int) throws -> Double? {
        switch value {
        case nil, .null?: return nil
        case .number(let number)? where number.isFinite: return number
        case let other?: throw invalid(index, "\(name) must be a finite number, not \(other.typeName == "number" ? "\(other)" : other.typeName)")
        }
    }
}
