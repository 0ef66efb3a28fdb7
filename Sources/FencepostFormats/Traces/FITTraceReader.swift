package import FencepostCore

/// Garmin FIT activity files (watches and bike computers), by FIT's published profile: the
/// `record` messages (global number 20) with a position, each a fix with its time, altitude,
/// speed and GPS accuracy where the record has them.
///
/// Streamed one message at a time: memory holds the 16 local definitions and one message.
/// Several FIT files written one after another in one file (a chained file) are read in turn.
/// A record without a position (before the GPS has a fix, or indoors), without a time, or with
/// a field of the wrong size is skipped and counted. The structure is checked as it is read,
/// and a file that breaks it is refused with the byte offset and what was wrong: a header or
/// file CRC that does not match, a data message of a local type no definition precedes, a
/// message running past the records' end, a file ending before it. A CRC mismatch refuses the
/// file, as nothing else in FIT shows a changed byte, and a changed byte in a position is an
/// event at the wrong place; a file cut short (a device still writing it) is refused the same
/// way, as other formats' truncated files are, and ingests once it is whole.
package struct FITTraceReader: TraceReader {
    /// FIT times count seconds from 1989-12-31T00:00:00Z.
    static let epoch: Double = 631_065_600
    /// Times below this count seconds from the device's power-on, not from the FIT epoch.
    static let firstAbsoluteTime: UInt32 = 0x1000_0000
    static let recordMessage: UInt16 = 20
    static let degreesPerSemicircle = 180.0 / 2_147_483_648.0

    /// Record fields, by their number in the profile.
    enum RecordField {
        static let latitude: UInt8 = 0, longitude: UInt8 = 1, altitude: UInt8 = 2, speed: UInt8 = 6
        static let gpsAccuracy: UInt8 = 31, enhancedSpeed: UInt8 = 73, enhancedAltitude: UInt8 = 78
        static let timestamp: UInt8 = 253
    }

    private var stream: FITByteStream
    private let device: String
    /// The header of the file being read; nil before the first and between chained files.
    private var header: FITHeader?
    private var definitions = [FITDefinition?](repeating: nil, count: 16)
    /// The last full timestamp read, which compressed timestamp headers count from.
    private var lastTimestamp: UInt32?
    package private(set) var skipped: [String: Int] = [:]

    package init(source: ByteSource, device: String) {
        stream = FITByteStream(source: source)
        self.device = device
    }

    package mutating func next() throws(TraceReadError) -> Fix? {
        while true {
            guard let header else {
                if stream.offset > 0, try stream.atEnd() { return nil }
                stream.resetCRC()
                header = try FITHeader.read(&stream)
                definitions = [FITDefinition?](repeating: nil, count: 16)
                lastTimestamp = nil
                continue
            }
            if stream.offset == header.dataEnd {
                try checkFileCRC()
                self.header = nil
                continue
            }
            if let fix = try message(header) { return fix }
        }
    }

    static func failure(_ file: String, at offset: Int, _ reason: String) -> TraceReadError {
        TraceReadError(file: file, line: nil, reason: "FIT byte \(offset): \(reason)")
    }

    // MARK: - Messages

    /// Reads the message at the stream's position: a definition is kept, a data message
    /// decoded; a fix when it is a record with a position.
    private mutating func message(_ header: FITHeader) throws(TraceReadError) -> Fix? {
        let start = stream.offset
        guard let headerByte = try stream.take(1)?.first else { throw truncated(header, at: start, inMessage: false) }
        if headerByte & 0x80 != 0 {
            // Compressed timestamp header: local type in bits 5–6, seconds in bits 0–4.
            let local = Int(headerByte >> 5 & 0x03)
            let definition = try defined(local, at: start)
            let content = try take(definition.messageSize, at: start, header)
            var time: UInt32?
            if let last = lastTimestamp {
                let offset = UInt32(headerByte & 0x1F)
                var full = last & ~0x1F | offset
                if offset < last & 0x1F { full &+= 0x20 }  // the 5 bits rolled over
                lastTimestamp = full
                time = full
            }
            return decode(content, definition, compressedTime: time)
        }
        let local = Int(headerByte & 0x0F)
        if headerByte & 0x40 != 0 {
            definitions[local] = try FITDefinition.read(
                &stream, start: start, developerFields: headerByte & 0x20 != 0, dataEnd: header.dataEnd)
            return nil
        }
        let definition = try defined(local, at: start)
        let content = try take(definition.messageSize, at: start, header)
        return decode(content, definition, compressedTime: nil)
    }

    private func defined(_ local: Int, at start: Int) throws(TraceReadError) -> FITDefinition {
        guard let definition = definitions[local] else {
            throw Self.failure(
                stream.name, at: start, "a data message of local type \(local), which no definition precedes")
        }
        return definition
    }

    /// A data message's content, checked to end within the records.
    private mutating func take(_ count: Int, at start: Int, _ header: FITHeader) throws(TraceReadError)
        -> ArraySlice<UInt8>
    {
        guard stream.offset + count <= header.dataEnd else {
            throw Self.failure(
                stream.name, at: start,
                "a message of \(count + 1) bytes runs past the end of the records (byte \(header.dataEnd))")
        }
        guard let content = try stream.take(count) else { throw truncated(header, at: start) }
        return content
    }

    /// The file ended at `start` or inside the message starting there.
    private func truncated(_ header: FITHeader, at start: Int, inMessage: Bool = true) -> TraceReadError {
        Self.failure(
            stream.name, at: start,
            "the file ends \(inMessage ? "inside this message" : "here"), "
                + "before the end of the records its header gives (byte \(header.dataEnd)): "
                + "cut short, or still being written")
    }

    private mutating func checkFileCRC() throws(TraceReadError) {
        let start = stream.offset
        let computed = stream.crc
        guard let bytes = try stream.take(2) else {
            throw Self.failure(stream.name, at: start, "the file ends before its CRC")
        }
        let stored = UInt16(FITValue.unsigned(bytes, bigEndian: false))
        guard stored == computed else {
            throw Self.failure(
                stream.name, at: start,
                "file CRC mismatch (stored 0x\(FITCRC.hex(stored)), computed 0x\(FITCRC.hex(computed))): "
                    + "the file is corrupt")
        }
    }

    // MARK: - Records

    /// Notes a message's timestamp (any message's: compressed headers count from the last),
    /// and makes a fix of a record with a time and a position; other records are counted.
    private mutating func decode(_ content: ArraySlice<UInt8>, _ definition: FITDefinition, compressedTime: UInt32?)
        -> Fix?
    {
        let ownTime = Self.value(RecordField.timestamp, size: 4, in: content, definition)
        if case .valid(let time) = ownTime { lastTimestamp = UInt32(time) }
        guard definition.globalMessage == Self.recordMessage else { return nil }
        let time: UInt32
        switch ownTime {
        case .valid(let value): time = UInt32(value)
        case .absent, .invalid:
            guard let compressedTime else { return skip("missing_or_bad_time") }
            time = compressedTime
        case .wrongSize: return skip("bad_field_size")
        }
        guard time >= Self.firstAbsoluteTime else { return skip("missing_or_bad_time") }
        let latitude = Self.value(RecordField.latitude, size: 4, in: content, definition, signed: true)
        let longitude = Self.value(RecordField.longitude, size: 4, in: content, definition, signed: true)
        guard case .valid(let latSemicircles) = latitude, case .valid(let lonSemicircles) = longitude else {
            if case .wrongSize = latitude { return skip("bad_field_size") }
            if case .wrongSize = longitude { return skip("bad_field_size") }
            return skip("no_position")
        }
        let lat = Double(Int32(truncatingIfNeeded: latSemicircles)) * Self.degreesPerSemicircle
        let lon = Double(Int32(truncatingIfNeeded: lonSemicircles)) * Self.degreesPerSemicircle
        guard abs(lat) <= 90, abs(lon) <= 180 else { return skip("missing_or_bad_coordinates") }
        let altitude =
            Self.value(RecordField.enhancedAltitude, size: 4, in: content, definition).number
            ?? Self.value(RecordField.altitude, size: 2, in: content, definition).number
        let speed =
            Self.value(RecordField.enhancedSpeed, size: 4, in: content, definition).number
            ?? Self.value(RecordField.speed, size: 2, in: content, definition).number
        let accuracy = Self.value(RecordField.gpsAccuracy, size: 1, in: content, definition).number
        return Fix(
            device: device, time: Double(time) + Self.epoch, lat: lat, lon: lon,
            accuracy: accuracy, altitude: altitude.map { $0 / 5 - 500 }, speed: speed.map { $0 / 1000 })
    }

    private mutating func skip(_ reason: String) -> Fix? {
        skipped[reason, default: 0] += 1
        return nil
    }

    /// A field's value as the record holds it.
    enum FieldValue {
        case absent
        /// The field is there with a size other than its type's.
        case wrongSize
        /// FIT's "invalid" value of the type: the writer had none.
        case invalid
        case valid(UInt64)

        var number: Double? {
            if case .valid(let value) = self { return Double(value) }
            return nil
        }
    }

    /// The integer field `number`, expected `size` bytes long (unsigned unless `signed`).
    static func value(
        _ number: UInt8, size: Int, in content: ArraySlice<UInt8>, _ definition: FITDefinition, signed: Bool = false
    ) -> FieldValue {
        guard let field = definition.field(number) else { return .absent }
        guard field.size == size else { return .wrongSize }
        let start = content.startIndex + field.offset
        let raw = FITValue.unsigned(content[start..<(start + size)], bigEndian: definition.bigEndian)
        let invalid: UInt64 =
            signed ? (1 << (UInt64(size) * 8 - 1)) - 1 : (size == 8 ? .max : (1 << (UInt64(size) * 8)) - 1)
        return raw == invalid ? .invalid : .valid(raw)
    }
}
