package import FencepostCore
package import FencepostGeometry
import Foundation

/// A transition as a client reported it, before its region is looked up among the monitored
/// ones (the store refuses one it does not know).
package struct ReportedTransition: Sendable, Equatable {
    /// How the report names its region.
    package enum RegionName: Sendable, Equatable {
        /// By id (the plain JSON form's `region`).
        case id(String)
        /// OwnTracks: the waypoint's `rid` (the region id Fencepost sent it as), else its
        /// `desc`, else its `wtst` (the `tst` Fencepost derived from the id).
        case ownTracks(rid: String?, desc: String?, wtst: Double?)
    }

    package var region: RegionName
    package var kind: EventKind
    package var time: Double
    package var accuracy: Double?
    package var position: Position?
    /// Its index in the request, for errors.
    package var index: Int

    /// The transition for `device`, in the region `regionID` the name was found to be.
    package func resolved(device: String, regionID: String) -> DeviceTransition {
        DeviceTransition(
            device: device, regionID: regionID, kind: kind, time: time, accuracy: accuracy, position: position)
    }
}

/// Reads reported transitions: the plain JSON form of `POST /v1/devices/{id}/transitions` and
/// OwnTracks `transition` messages. A malformed one refuses the request whole, with its index.
package enum TransitionPayloads {
    /// The most transitions one request may carry: a phone reports a few, a backlog hundreds.
    package static let maximumTransitions = 10_000

    /// `{"region": ID, "kind": "enter"|"exit", "time": RFC 3339 or epoch seconds, "accuracy": m}`,
    /// or an array of them. `lat`/`lon` are optional (where the device was).
    package static func plain(_ body: JSONValue, now: Double = Date().timeIntervalSince1970)
        throws(LocationPayloadError) -> [ReportedTransition]
    {
        let items: [JSONValue]
        switch body {
        case .array(let array): items = array
        case .object: items = [body]
        default:
            throw .malformed(#"the body must be a transition object ({"region","kind","time"}) or an array of them"#)
        }
        guard items.count <= maximumTransitions else {
            throw .malformed("a request may carry at most \(maximumTransitions) transitions; send them in several")
        }
        let times = FixTimeRange.live(now: now)
        return try items.enumerated().map { (index, item) throws(LocationPayloadError) in
            guard case .object = item else {
                throw invalid(index, "a transition must be an object, not \(item.typeName)")
            }
            guard case .string(let region)? = item["region"], !region.isEmpty else {
                throw invalid(index, "region (the region's id) is missing")
            }
            let kind: EventKind
            switch item["kind"] {
            case .string("enter")?: kind = .enter
            case .string("exit")?: kind = .exit
            case nil, .null?: throw invalid(index, #"kind is missing ("enter" or "exit")"#)
            case let other?: throw invalid(index, #"kind must be "enter" or "exit", not \#(other)"#)
            }
            return ReportedTransition(
                region: .id(region), kind: kind, time: try time(item["time"], "time", index: index, times: times),
                accuracy: try accuracy(item["accuracy"], "accuracy", index: index),
                position: try position(item, index: index), index: index)
        }
    }

    /// An OwnTracks `transition`: `event` `enter`|`leave`, `tst` (when it happened), `rid`,
    /// `desc` or `wtst` naming the waypoint, `acc`, `lat`/`lon`; `t` (what triggered it) is not kept.
    static func ownTracks(_ message: JSONValue, index: Int, times: FixTimeRange) throws(LocationPayloadError)
        -> ReportedTransition
    {
        let kind: EventKind
        switch message["event"] {
        case .string("enter")?: kind = .enter
        case .string("leave")?: kind = .exit
        case nil, .null?: throw invalid(index, #"event is missing ("enter" or "leave")"#)
        case let other?: throw invalid(index, #"event must be "enter" or "leave", not \#(other)"#)
        }
        let rid = message["rid"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let desc = message["desc"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let wtst = try LocationPayloads.optionalNumber(message["wtst"], "wtst", index: index)
        guard rid != nil || desc != nil || wtst != nil else {
            throw invalid(index, "the waypoint is not named: no rid, desc or wtst")
        }
        return ReportedTransition(
            region: .ownTracks(rid: rid, desc: desc, wtst: wtst), kind: kind,
            time: try time(message["tst"], "tst", index: index, times: times),
            accuracy: try accuracy(message["acc"], "acc", index: index),
            position: try position(message, index: index), index: index)
    }

    // MARK: - Pieces

    private static func invalid(_ index: Int, _ reason: String) -> LocationPayloadError {
        .invalidTransition(index: index, reason: reason)
    }

    private static func time(_ value: JSONValue?, _ name: String, index: Int, times: FixTimeRange)
        throws(LocationPayloadError) -> Double
    {
        let seconds: Double
        switch value {
        case .string(let text)?:
            guard let parsed = Timestamp.parse(text) else {
                throw invalid(index, "\(name) is not an RFC 3339 time: \(text)")
            }
            seconds = parsed
        case .number(let number)? where number.isFinite:
            seconds = number
        case nil, .null?:
            throw invalid(index, "\(name) is missing")
        case let other?:
            throw invalid(index, "\(name) must be an RFC 3339 string or epoch seconds, not \(other.typeName)")
        }
        guard times.contains(seconds) else { throw invalid(index, "\(name): " + times.refusal(of: seconds)) }
        return seconds
    }

    private static func accuracy(_ value: JSONValue?, _ name: String, index: Int) throws(LocationPayloadError)
        -> Double?
    {
        switch value {
        case nil, .null?: return nil
        case .number(let number)? where number.isFinite && number >= 0: return number
        case let other?: throw invalid(index, "\(name) must be 0 or more metres, not \(other)")
        }
    }

    /// `lat` and `lon` when both are given and in range; neither is fine, one alone is not.
    private static func position(_ item: JSONValue, index: Int) throws(LocationPayloadError) -> Position? {
        switch (item["lat"], item["lon"]) {
        case (nil, nil), (.null?, .null?): return nil
        case (.number(let lat)?, .number(let lon)?)
        where lat.isFinite && lon.isFinite && abs(lat) <= 90 && abs(lon) <= 180:
            return Position(lon: lon, lat: lat)
        default: throw invalid(index, "lat and lon must be given together, as numbers in range")
        }
    }
}
