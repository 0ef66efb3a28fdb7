package import FencepostCore
import FencepostGeometry

/// Everything Fencepost remembers of a device between inputs, stored as JSON in `devices`.
package struct DeviceState: Sendable, Hashable, Codable {
    /// The time of the last fix processed: fixes at or before it are already seen.
    package var anchor: Double?
    package var filter: FilterState
    package var monitor: MonitorState

    package init(anchor: Double? = nil, filter: FilterState = FilterState(), monitor: MonitorState = MonitorState()) {
        self.anchor = anchor
        self.filter = filter
        self.monitor = monitor
    }
}

extension DeviceState {
    /// The state as stored in `devices.state`: the JSON its `Codable` conformance reads back
    /// (keys are the property names, absent optionals left out, flags as their raw value),
    /// written straight to bytes: `JSONEncoder` took a fifth of the live writer's time.
    var storedText: String {
        var json = JSONObjectWriter()
        json.member("anchor", anchor)
        json.member("filter") { json in json.member("lastAccepted", filter.lastAccepted, Self.write) }
        json.member("monitor") { json in
            json.member("lastFix", monitor.lastFix, Self.write)
            json.member("memberships") { json in
                for (region, membership) in monitor.memberships {
                    json.member(region) { Self.write(membership, to: &$0) }
                }
            }
            // Written only when there are some: states without are stored as before.
            if !monitor.speeding.isEmpty {
                json.member("speeding") { json in
                    for (region, episode) in monitor.speeding {
                        json.member(region) { Self.write(episode, to: &$0) }
                    }
                }
            }
        }
        return json.text
    }

    private static func write(_ point: FixPoint, to json: inout JSONObjectWriter) {
        json.member("time", point.time)
        json.member("lat", point.lat)
        json.member("lon", point.lon)
        json.member("accuracy", point.accuracy)
    }

    private static func write(_ membership: Membership, to json: inout JSONObjectWriter) {
        json.member("phase", .string(membership.phase.rawValue))
        json.member("enter") { write(membership.enter, to: &$0) }
        json.member("outward", membership.outward, write)
        json.member("armed", .bool(membership.armed))
        json.member("dwellEmitted", .bool(membership.dwellEmitted))
        // Written only once it is true: states without overstays are stored as before.
        if membership.overstayEmitted { json.member("overstayEmitted", .bool(true)) }
        // Only while an enter of a dense trace waits, and for a visit of one fix inside so far.
        json.member("denseFrom", membership.denseFrom, write)
        if membership.insideFixes < 2 { json.member("insideFixes", Double(membership.insideFixes)) }
    }

    private static func write(_ episode: SpeedEpisode, to json: inout JSONObjectWriter) {
        json.member("visitEnteredAt", episode.visitEnteredAt)
        json.member("start", episode.start)
        json.member("position") {
            $0.member("lon", episode.position.lon)
            $0.member("lat", episode.position.lat)
        }
        json.member("maxSpeed", episode.maxSpeed)
    }

    private static func write(_ crossing: Crossing, to json: inout JSONObjectWriter) {
        json.member("time", crossing.time)
        json.member("flags", Double(crossing.flags.rawValue))
        json.member("position", crossing.position) { position, json in
            json.member("lon", position.lon)
            json.member("lat", position.lat)
        }
    }
}

/// Writes nested JSON objects member by member, without building a tree.
private struct JSONObjectWriter {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var first = true

    var text: String { String(decoding: bytes + [UInt8(ascii: "}")], as: UTF8.self) }

    private mutating func key(_ name: String) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        JSONValue.string(name).write(to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func member(_ name: String, _ value: JSONValue) {
        key(name)
        value.write(to: &bytes)
    }

    /// A number member, left out when nil.
    mutating func member(_ name: String, _ number: Double?) {
        if let number { member(name, .number(number)) }
    }

    /// An object member whose members `body` writes.
    mutating func member(_ name: String, _ body: (inout JSONObjectWriter) -> Void) {
        key(name)
        bytes.append(UInt8(ascii: "{"))
        first = true
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    /// An object member written by `write`, left out when `value` is nil.
    mutating func member<Value>(_ name: String, _ value: Value?, _ write: (Value, inout JSONObjectWriter) -> Void) {
        if let value { member(name) { write(value, &$0) } }
    }
}
