package import FencepostCore
import Foundation

/// GeoLife `.plt`: six header lines, then `lat,lon,0,altitude_ft,days,date,time` in UTC.
package struct PLTTraceReader: TraceReader {
    private var lines: LineReader
    private let device: String
    package private(set) var skipped: [String: Int] = [:]

    package init(source: ByteSource, device: String) {
        lines = LineReader(source: source)
        self.device = device
    }

    package mutating func next() throws(TraceReadError) -> Fix? {
        while let line = try lines.next() {
            if lines.lineNumber <= 6 {
                if lines.lineNumber == 1, !line.starts(with: Array("Geolife trajectory".utf8)) {
                    throw TraceReadError(
                        file: lines.name, line: 1, reason: "not a GeoLife .plt file: expected 'Geolife trajectory'")
                }
                continue
            }
            let fields = line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
            guard fields.count >= 7 else {
                skipped["malformed_record", default: 0] += 1
                continue
            }
            guard let time = Timestamp.parse(utf8: Array(fields[5] + [UInt8(ascii: "T")] + fields[6])[...]) else {
                skipped["missing_or_bad_time", default: 0] += 1
                continue
            }
            guard let lat = DecimalParser.parse(fields[0]), let lon = DecimalParser.parse(fields[1]) else {
                skipped["missing_or_bad_coordinates", default: 0] += 1
                continue
            }
            // -777 marks a missing altitude; feet to metres.
            let altitude = DecimalParser.parse(fields[3]).flatMap { $0 == -777 ? nil : $0 * 0.3048 }
            return Fix(device: device, time: time, lat: lat, lon: lon, altitude: altitude)
        }
        return nil
    }
}

/// OwnTracks Recorder `.rec`: `timestamp<TAB>*<TAB>{json}` lines; `_type: location` records
/// with `tst`, `lat`, `lon`, `acc`, `alt`, `vel` (km/h) and `tid`.
///
/// The device, unless one is given: `user/device` where the record or the file says it (a
/// record's `topic`, `owntracks/USER/DEVICE`; a file in the recorder's store layout,
/// `rec/USER/DEVICE/YYYY-MM.rec`), as `serve` names OwnTracks devices; else the record's `tid`,
/// so a file of several phones' records is a fleet; else the file's name.
package struct OwnTracksTraceReader: TraceReader {
    private var lines: LineReader
    private let fallbackDevice: String
    private let deviceOverride: String?
    /// `user/device` from the file's place in the recorder's store, when it is there.
    private let recorderDevice: String?
    package private(set) var skipped: [String: Int] = [:]

    package init(source: ByteSource, fallbackDevice: String, device: String?) {
        lines = LineReader(source: source)
        self.fallbackDevice = fallbackDevice
        self.deviceOverride = device
        self.recorderDevice = Self.recorderDevice(path: source.name)
    }

    /// `USER/DEVICE` of a path `…/rec/USER/DEVICE/FILE.rec`, the recorder's store layout.
    static func recorderDevice(path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 4, parts[parts.count - 4] == "rec", parts[parts.count - 1].hasSuffix(".rec") else {
            return nil
        }
        return "\(parts[parts.count - 3])/\(parts[parts.count - 2])"
    }

    /// `USER/DEVICE` of a record's MQTT topic `owntracks/USER/DEVICE`.
    private static func topicDevice(_ record: JSONValue) -> String? {
        guard let topic = record["topic"]?.stringValue else { return nil }
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, !parts[1].isEmpty, !parts[2].isEmpty else { return nil }
        return "\(parts[1])/\(parts[2])"
    }

    package mutating func next() throws(TraceReadError) -> Fix? {
        while let line = try lines.next() {
            guard let brace = line.firstIndex(of: UInt8(ascii: "{")) else {
                if !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { skipped["malformed_record", default: 0] += 1 }
                continue
            }
            guard let record = try? JSONParser.parse(Array(line[brace...])) else {
                skipped["malformed_record", default: 0] += 1
                continue
            }
            guard record["_type"]?.stringValue == "location" else { continue }  // lwt, transition, …
            let tst = record["tst"].flatMap { value -> Double? in
                value.numberValue ?? value.stringValue.flatMap(Double.init)
            }
            guard let time = tst else {
                skipped["missing_or_bad_time", default: 0] += 1
                continue
            }
            guard let lat = record["lat"]?.numberValue, let lon = record["lon"]?.numberValue else {
                skipped["missing_or_bad_coordinates", default: 0] += 1
                continue
            }
            let speed = record["vel"]?.numberValue.flatMap { $0 < 0 ? nil : $0 / 3.6 }
            return Fix(
                device: deviceOverride ?? Self.topicDevice(record) ?? recorderDevice ?? record["tid"]?.stringValue
                    ?? fallbackDevice,
                time: time, lat: lat, lon: lon,
                accuracy: record["acc"]?.numberValue, altitude: record["alt"]?.numberValue, speed: speed)
        }
        return nil
    }
}
