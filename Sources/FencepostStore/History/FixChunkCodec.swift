package import FencepostCore

/// The bytes of a stored chunk of fixes (``FixHistory``): one device's fixes within one hour, in
/// time order, each as varints of its difference from the fix before it (the first from zero).
///
/// Per fix: `zigzag(Δtime ms) << 3 | present`, where `present`'s bits say which of accuracy (1),
/// altitude (2) and speed (4) follow; then `zigzag(Δlat)` and `zigzag(Δlon)` in 1e-7 degrees
/// (about a centimetre); then, when present, accuracy in decimetres, altitude in decimetres and
/// speed in centimetres per second, each as `zigzag(Δ)` from the last fix that had one. A fix a
/// second from the last, a few metres away, takes 6 to 8 bytes.
///
/// A chunk grows at its end without being rewritten: ``Encoder`` starts from the state its
/// last fix left (``Decoder`` reads it back).
package enum FixChunkCodec {
    /// Where a chunk's reading or writing stands: the last fix's values, in stored units.
    package struct State: Sendable, Equatable {
        var timeMs: Int64 = 0
        var lat: Int64 = 0
        var lon: Int64 = 0
        var accuracy: Int64 = 0
        var altitude: Int64 = 0
        var speed: Int64 = 0

        package init() {}

        /// The time of the last fix, in milliseconds.
        package var lastTimeMs: Int64 { timeMs }
    }

    /// Appends fixes to a chunk's bytes.
    package struct Encoder {
        package private(set) var state: State
        package private(set) var bytes: [UInt8]

        /// An encoder that continues `bytes`, whose last fix left `state` (a new chunk: both empty).
        package init(continuing bytes: [UInt8] = [], state: State = State()) {
            self.bytes = bytes
            self.state = state
        }

        /// Appends one fix; its time must follow the last one's (``FixHistory`` sorts).
        package mutating func append(_ fix: Fix) {
            append(fix, timeMs: Timestamp.milliseconds(fix.time))
        }

        /// Appends one fix whose time in whole milliseconds is `timeMs`.
        package mutating func append(_ fix: Fix, timeMs: Int64) {
            var present: UInt64 = 0
            let accuracy = fix.accuracy.flatMap { FixChunkCodec.scaled($0, by: 10) }
            let altitude = fix.altitude.flatMap { FixChunkCodec.scaled($0, by: 10) }
            let speed = fix.speed.flatMap { FixChunkCodec.scaled($0, by: 100) }
            if accuracy != nil { present |= 1 }
            if altitude != nil { present |= 2 }
            if speed != nil { present |= 4 }
            let lat = FixChunkCodec.scaled(fix.lat, by: 1e7) ?? 0
            let lon = FixChunkCodec.scaled(fix.lon, by: 1e7) ?? 0
            put(FixChunkCodec.zigzag(timeMs &- state.timeMs) << 3 | present)
            put(FixChunkCodec.zigzag(lat &- state.lat))
            put(FixChunkCodec.zigzag(lon &- state.lon))
            (state.timeMs, state.lat, state.lon) = (timeMs, lat, lon)
            if let accuracy {
                put(FixChunkCodec.zigzag(accuracy &- state.accuracy))
                state.accuracy = accuracy
            }
            if let altitude {
                put(FixChunkCodec.zigzag(altitude &- state.altitude))
                state.altitude = altitude
            }
            if let speed {
                put(FixChunkCodec.zigzag(speed &- state.speed))
                state.speed = speed
            }
        }

        private mutating func put(_ value: UInt64) {
            var rest = value
            while rest >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            bytes.append(UInt8(rest))
        }
    }

    /// Reads a chunk's fixes back, in the order they were written.
    package struct Decoder {
        private let bytes: [UInt8]
        private var at = 0
        package private(set) var state = State()

        package init(_ bytes: [UInt8]) {
            self.bytes = bytes
        }

        /// The next fix (for `device`); nil at the end. Bytes that end inside a fix throw.
        package mutating func next(device: String) throws -> Fix? {
            guard let present = try advance() else { return nil }
            var fix = Fix(
                device: device, time: Double(state.timeMs) / 1000, lat: Double(state.lat) / 1e7,
                lon: Double(state.lon) / 1e7)
            if present & 1 != 0 { fix.accuracy = Double(state.accuracy) / 10 }
            if present & 2 != 0 { fix.altitude = Double(state.altitude) / 10 }
            if present & 4 != 0 { fix.speed = Double(state.speed) / 100 }
            return fix
        }

        /// Reads to the end: the state an ``Encoder`` continuing these bytes starts from. No fix
        /// is made on the way: a live device's every post appends to its last chunk, whose
        /// fixes (up to ``FixHistory/chunkLimit``) are only stepped over.
        package mutating func skipToEnd() throws -> State {
            while try advance() != nil {}
            return state
        }

        /// Steps `state` over the next fix; returns which of its optional values it has (bits 1,
        /// 2, 4: accuracy, altitude, speed), nil at the end.
        private mutating func advance() throws -> UInt64? {
            guard at < bytes.count else { return nil }
            let head = try take()
            let present = head & 7
            state.timeMs &+= FixChunkCodec.unzigzag(head >> 3)
            state.lat &+= FixChunkCodec.unzigzag(try take())
            state.lon &+= FixChunkCodec.unzigzag(try take())
            if present & 1 != 0 { state.accuracy &+= FixChunkCodec.unzigzag(try take()) }
            if present & 2 != 0 { state.altitude &+= FixChunkCodec.unzigzag(try take()) }
            if present & 4 != 0 { state.speed &+= FixChunkCodec.unzigzag(try take()) }
            return present
        }

        private mutating func take() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while at < bytes.count {
                let byte = bytes[at]
                at += 1
                guard shift < 64 else { break }
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            throw CorruptChunk()
        }
    }

    /// A stored chunk whose bytes do not decode.
    package struct CorruptChunk: Error, CustomStringConvertible {
        package var description: String { "a stored chunk of fixes is corrupt (its bytes end inside a fix)" }
    }

    /// `value × scale`, rounded; nil when not finite or beyond what 64 bits hold.
    static func scaled(_ value: Double, by scale: Double) -> Int64? {
        let scaled = (value * scale).rounded()
        guard scaled.isFinite, abs(scaled) < 9.0e18 else { return nil }
        return Int64(scaled)
    }

    static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }
}
