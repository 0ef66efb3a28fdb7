package import FencepostCore
import Foundation

/// Why a location payload was refused, whole: nothing of it may be written.
package enum LocationPayloadError: Error, Equatable, CustomStringConvertible {
    /// Not the shape expected: not JSON, no `fixes` array, a required parameter missing (400).
    case malformed(String)
    /// One fix that is not valid, by its index in the request (422).
    case invalidFix(index: Int, reason: String)
    /// A device id that is not acceptable (422); see ``DeviceID``.
    case invalidDevice(String)
    /// More fixes than one request may carry (413).
    case tooManyFixes(limit: Int)
    /// One reported transition that is not valid, by its index in the request (422).
    case invalidTransition(index: Int, reason: String)

    package var description: String {
        switch self {
        case .malformed(let reason): return reason
        case .invalidFix(let index, let reason): return "fix \(index): \(reason); nothing of this request was written"
        case .invalidDevice(let reason): return "\(reason); nothing of this request was written"
        case .invalidTransition(let index, let reason):
            return "transition \(index): \(reason); nothing of this request was written"
        case .tooManyFixes(let limit):
            return "a request may carry at most \(limit) fixes; send them in several requests"
        }
    }
}

/// Turns the bodies the service accepts into fixes, refusing a whole request when any of its
/// fixes is malformed (so a bad request writes nothing), with the fix's index and the reason.
///
/// What comes from outside is bounded before it is held: the body's size by the service, the
/// nesting of JSON by the scanner, the count of fixes here (``maximumFixes``), device ids by
/// ``DeviceID``.
package enum LocationPayloads {
    /// The most fixes one request may carry: a phone sends a few at a time, a backlog a few
    /// thousand; a bulk load belongs to `fencepost ingest`.
    package static let maximumFixes = 50_000

    /// `device` if it is an acceptable device id, else ``LocationPayloadError/invalidDevice(_:)``.
    package static func checkedDevice(_ device: String) throws(LocationPayloadError) -> String {
        if let problem = DeviceID.problem(device) { throw .invalidDevice(problem) }
        return device
    }

    /// Our batch: `{"fixes":[{"time":"RFC 3339","lat":..,"lon":..,"accuracy":..}, ...]}`;
    /// `time` may also be seconds since the epoch; `altitude` and `speed` are optional. A time
    /// outside ``FixTimeRange/live(now:)`` refuses the request, naming the fix.
    ///
    /// Read member by member (no tree of the whole body: this is the service's hottest path).
    /// As with a tree, the whole body must be valid JSON before any fix is judged, so a syntax
    /// error anywhere is a 400 even after an invalid fix.
    package static func batch(_ bytes: [UInt8], device: String, now: Double = Date().timeIntervalSince1970)
        throws(LocationPayloadError) -> [Fix]
    {
        let device = try checkedDevice(device)
        let times = FixTimeRange.live(now: now)
        var json = JSONScanner(bytes)
        var fixes: [Fix]?
        var firstInvalid: LocationPayloadError?
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
                        guard index < maximumFixes else { throw LocationPayloadError.tooManyFixes(limit: maximumFixes) }
                        do {
                            fixes!.append(try fix(&json, index: index, device: device, times: times))
                        } catch let error as LocationPayloadError {
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
            throw .malformed("the body is not valid JSON: \(error)")
        } catch let error as LocationPayloadError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
        guard let fixes else { throw .malformed(#"the body must be an object with a "fixes" array"#) }
        if let firstInvalid { throw firstInvalid }
        return fixes
    }

    /// One fix of a batch, read from the scanner; a malformed one throws `invalid_fix` after its
    /// value has been read whole, so the caller can go on checking the rest of the body.
    private static func fix(_ json: inout JSONScanner, index: Int, device: String, times: FixTimeRange) throws -> Fix {
        guard json.nextKind() == .object else {
            throw invalid(index, "a fix must be an object, not \(try json.readValue().typeName)")
        }
        var time: JSONValue?
        var lat: JSONValue?
        var lon: JSONValue?
        var accuracy: JSONValue?
        var altitude: JSONValue?
        var speed: JSONValue?
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
            guard let parsed = Timestamp.parse(text) else {
                throw invalid(index, "time is not an RFC 3339 time: \(text)")
            }
            seconds = parsed
        case .number(let number)? where number.isFinite:
            seconds = number
        case nil, .null?:
            throw invalid(index, "time is missing")
        case let other?:
            throw invalid(index, "time must be an RFC 3339 string, not \(other.typeName)")
        }
        guard times.contains(seconds) else { throw invalid(index, times.refusal(of: seconds)) }
        return Fix(
            device: device, time: seconds,
            lat: try coordinate(lat, "lat", range: 90, index: index),
            lon: try coordinate(lon, "lon", range: 180, index: index),
            accuracy: try checkedAccuracy(optionalNumber(accuracy, "accuracy", index: index), "accuracy", index: index),
            altitude: try optionalNumber(altitude, "altitude", index: index),
            speed: try optionalNumber(speed, "speed", index: index))
    }

    /// An OwnTracks HTTP-mode payload: one JSON object. Only `_type: location` carries a fix;
    /// other types (waypoint, lwt, card…) are accepted and ignored, transitions read apart.
    package static func ownTracks(_ body: JSONValue, device: String, now: Double = Date().timeIntervalSince1970)
        throws(LocationPayloadError) -> [Fix]
    {
        try ownTracksMessages(body, device: device, now: now).fixes
    }

    /// An OwnTracks payload (one message, or an array of them) with its messages counted by
    /// `_type`: `location` messages are the fixes, `transition` messages the reported
    /// transitions (``TransitionPayloads/ownTracks(_:index:times:)``); `waypoint`, `waypoints`,
    /// `lwt`, `card`, `status` and the rest are accepted and counted, not stored (a message
    /// without a `_type`, or of a type OwnTracks does not document, counts as `other`, so a
    /// client cannot make up metric labels).
    package static func ownTracksMessages(
        _ body: JSONValue, device: String, now: Double = Date().timeIntervalSince1970
    ) throws(LocationPayloadError) -> ProtocolMessages {
        let times = FixTimeRange.live(now: now)
        let items = body.arrayValue ?? [body]
        guard items.count <= maximumFixes else { throw .tooManyFixes(limit: maximumFixes) }
        var messages = ProtocolMessages()
        for (index, message) in items.enumerated() {
            let type = message["_type"]?.stringValue ?? "other"
            messages.count(ownTracksTypes.contains(type) ? type : "other")
            if type == "transition" {
                messages.transitions.append(try TransitionPayloads.ownTracks(message, index: index, times: times))
            }
            guard type == "location" else { continue }
            guard case .number(let tst)? = message["tst"], tst.isFinite else {
                throw invalid(index, "tst (epoch seconds) is missing")
            }
            guard times.contains(tst) else { throw invalid(index, "tst: " + times.refusal(of: tst)) }
            messages.fixes.append(
                Fix(
                    device: device, time: tst,
                    lat: try coordinate(message["lat"], "lat", range: 90, index: index),
                    lon: try coordinate(message["lon"], "lon", range: 180, index: index),
                    accuracy: try checkedAccuracy(
                        optionalNumber(message["acc"], "acc", index: index), "acc", index: index),
                    altitude: try optionalNumber(message["alt"], "alt", index: index),
                    // OwnTracks reports velocity in km/h.
                    speed: try optionalNumber(message["vel"], "vel", index: index).map { $0 / 3.6 }))
            messages.countExtras(["batt", "bs", "conn", "m", "t"], in: message)
        }
        return messages
    }

    /// The message types OwnTracks documents (its booklet's JSON page).
    package static let ownTracksTypes: Set<String> = [
        "location", "transition", "waypoint", "waypoints", "lwt", "card", "cmd", "status", "steps", "beacon",
        "encrypted", "configuration", "request",
    ]

    /// The device of an OwnTracks post: `user/device` from the `X-Limit-U`/`X-Limit-D` headers,
    /// or the basic-auth user and the payload's `tid`; just one of them when the other is
    /// missing (or when both are the same).
    package static func ownTracksDevice(user: String?, device: String?) throws(LocationPayloadError) -> String {
        guard let name = device ?? user else {
            throw .malformed("OwnTracks: no device (X-Limit-D header or tid) and no user (X-Limit-U or basic auth)")
        }
        return try checkedDevice(user.map { $0 == name ? name : "\($0)/\(name)" } ?? name)
    }

    /// The OsmAnd / Traccar Client protocol: one fix in query (or form) parameters.
    /// `timestamp` is epoch seconds, epoch milliseconds, or an RFC 3339 time; outside
    /// ``FixTimeRange/live(now:)`` it is refused as fix 0.
    package static func osmAnd(_ parameter: (String) -> String?, now: Double = Date().timeIntervalSince1970)
        throws(LocationPayloadError) -> Fix
    {
        guard let id = parameter("id") ?? parameter("deviceid") else { throw .malformed("id (the device) is missing") }
        let device = try checkedDevice(id)
        func number(_ name: String) throws(LocationPayloadError) -> Double? {
            guard let text = parameter(name) else { return nil }
            guard let value = Double(text), value.isFinite else { throw .malformed("\(name) is not a number: \(text)") }
            return value
        }
        guard let lat = try number("lat"), let lon = try number("lon") else {
            throw .malformed("lat and lon are required")
        }
        guard abs(lat) <= 90, abs(lon) <= 180 else { throw .malformed("lat/lon out of range: \(lat), \(lon)") }
        guard let stamp = parameter("timestamp") else { throw .malformed("timestamp is missing") }
        let time: Double
        if let epoch = Double(stamp), epoch.isFinite {
            time = epoch > 100_000_000_000 ? epoch / 1000 : epoch
        } else if let parsed = Timestamp.parse(stamp) {
            time = parsed
        } else {
            throw .malformed("timestamp is neither epoch seconds nor an RFC 3339 time: \(stamp)")
        }
        let times = FixTimeRange.live(now: now)
        guard times.contains(time) else { throw invalid(0, "timestamp: " + times.refusal(of: time)) }
        var accuracy = try number("accuracy")
        if accuracy == nil { accuracy = try number("hdop") }
        accuracy = try checkedAccuracy(accuracy, "accuracy", index: 0)
        // OsmAnd sends speed in knots.
        return Fix(
            device: device, time: time, lat: lat, lon: lon, accuracy: accuracy,
            altitude: try number("altitude"), speed: try number("speed").map { $0 * 0.514444 })
    }

    // MARK: - Pieces

    /// The parameters of an `application/x-www-form-urlencoded` body (`+` for a space,
    /// percent escapes decoded); a pair that does not decode is left out.
    package static func formParameters(_ bytes: [UInt8]) -> [String: String] {
        var form: [String: String] = [:]
        for pair in String(decoding: bytes, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ")
            }
            if let key = parts.first?.removingPercentEncoding, parts.count == 2 {
                form[key] = parts[1].removingPercentEncoding
            }
        }
        return form
    }

    /// A JSON body, or ``LocationPayloadError/malformed(_:)``.
    package static func parse(_ bytes: [UInt8]) throws(LocationPayloadError) -> JSONValue {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw .malformed("the body is not valid JSON: \(error)")
        }
    }

    static func invalid(_ index: Int, _ reason: String) -> LocationPayloadError {
        .invalidFix(index: index, reason: reason)
    }

    static func coordinate(_ value: JSONValue?, _ name: String, range: Double, index: Int)
        throws(LocationPayloadError) -> Double
    {
        guard case .number(let number)? = value else {
            throw invalid(
                index, value == nil ? "\(name) is missing" : "\(name) must be a number, not \(value!.typeName)")
        }
        guard number.isFinite, abs(number) <= range else { throw invalid(index, "\(name) out of range: \(number)") }
        return number
    }

    /// An accuracy is a radius: 0 or more. Phones report a negative one for a position they
    /// know to be invalid (iOS's -1), which must not be taken as a precise fix.
    static func checkedAccuracy(_ value: Double?, _ name: String, index: Int) throws(LocationPayloadError)
        -> Double?
    {
        guard let value else { return nil }
        guard value >= 0 else {
            throw invalid(
                index, "\(name) must be 0 or more metres, not \(value) (a negative accuracy marks an invalid position)")
        }
        return value
    }

    static func optionalNumber(_ value: JSONValue?, _ name: String, index: Int) throws(LocationPayloadError)
        -> Double?
    {
        switch value {
        case nil, .null?: return nil
        case .number(let number)? where number.isFinite: return number
        case let other?:
            throw invalid(
                index,
                "\(name) must be a finite number, not \(other.typeName == "number" ? "\(other)" : other.typeName)")
        }
    }
}
