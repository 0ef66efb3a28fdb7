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
                    json.member(region: region) { Self.write(membership, to: &$0) }
                }
            }
            // Written only when there are some: states without are stored as before.
            if !monitor.speeding.isEmpty {
                json.member("speeding") { json in
                    for (region, episode) in monitor.speeding {
                        json.member(region: region) { Self.write(episode, to: &$0) }
                    }
                }
            }
        }
        return json.finish()
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
        json.member("armed", membership.armed)
        json.member("dwellEmitted", membership.dwellEmitted)
        // Written only once it is true: states without overstays are stored as before.
        if membership.overstayEmitted { json.member("overstayEmitted", true) }
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

/// Writes nested JSON objects member by member, without building a tree. Names written as
/// literals are the state's own keys (plain ASCII, copied as they are); region ids are escaped.
private struct JSONObjectWriter {
    private var bytes: [UInt8] = {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        bytes.append(UInt8(ascii: "{"))
        return bytes
    }()
    private var first = true

    /// The object closed, as text: its bytes are closed in place, not copied first (a copy of
    /// `bytes` taken to append to would be a second buffer of them).
    mutating func finish() -> String {
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func separate() {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
    }

    private mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func member(_ name: StaticString, _ value: JSONValue) {
        key(name)
        value.write(to: &bytes)
    }

    mutating func member(_ name: StaticString, _ flag: Bool) {
        key(name)
        bytes.append(contentsOf: (flag ? "true" : "false").utf8)
    }

    /// A number member, left out when nil.
    mutating func member(_ name: StaticString, _ number: Double?) {
        if let number { member(name, .number(number)) }
    }

    /// An object member whose members `body` writes.
    mutating func member(_ name: StaticString, _ body: (inout JSONObjectWriter) -> Void) {
        key(name)
        object(body)
    }

    /// An object member named by a region id, whose members `body` writes.
    mutating func member(region: String, _ body: (inout JSONObjectWriter) -> Void) {
        separate()
        JSONValue.string(region).write(to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        object(body)
    }

    /// An object member written by `write`, left out when `value` is nil.
    mutating func member<Value>(_ name: StaticString, _ value: Value?, _ write: (Value, inout JSONObjectWriter) -> Void)
    {
        if let value { member(name) { write(value, &$0) } }
    }

    private mutating func object(_ body: (inout JSONObjectWriter) -> Void) {
        bytes.append(UInt8(ascii: "{"))
        first = true
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        first = false
    }
}
