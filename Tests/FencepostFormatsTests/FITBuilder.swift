/// Writes small FIT files for tests, message by message, as FIT's published profile lays them
/// out: a 12- or 14-byte header, definition and data messages (normal or compressed timestamp
/// headers, either byte order), and the file CRC.
struct FITBuilder {
    /// A field of a definition: number, size in bytes, base type byte.
    struct Field {
        var number: UInt8
        var size: UInt8
        var baseType: UInt8
    }

    /// The record fields most tests use: timestamp, position_lat, position_long, altitude, speed.
    static let recordFields = [
        Field(number: 253, size: 4, baseType: 0x86), Field(number: 0, size: 4, baseType: 0x85),
        Field(number: 1, size: 4, baseType: 0x85), Field(number: 2, size: 2, baseType: 0x84),
        Field(number: 6, size: 2, baseType: 0x84),
    ]
    /// FIT's "invalid" sint32, written for a record without a position.
    static let noPosition: Int64 = 0x7FFF_FFFF

    private(set) var records: [UInt8] = []
    private var bigEndian = [Bool](repeating: false, count: 16)

    /// A definition message for `local`; `developerSizes` adds developer fields of those sizes.
    mutating func define(
        local: UInt8, global: UInt16, fields: [Field], bigEndian: Bool = false, developerSizes: [UInt8] = []
    ) {
        records.append(0x40 | (developerSizes.isEmpty ? 0 : 0x20) | local)
        records += [0, bigEndian ? 1 : 0]
        records += Self.bytes(Int64(global), size: 2, bigEndian: bigEndian)
        records.append(UInt8(fields.count))
        for field in fields { records += [field.number, field.size, field.baseType] }
        if !developerSizes.isEmpty {
            records.append(UInt8(developerSizes.count))
            for (index, size) in developerSizes.enumerated() { records += [UInt8(index), size, 0] }
        }
        self.bigEndian[Int(local)] = bigEndian
    }

    /// A data message for `local` with a normal header: each value written in its field's
    /// size, in the byte order its definition gave; `raw` bytes follow (developer fields).
    mutating func data(local: UInt8, _ values: [(Int64, Int)], raw: [UInt8] = []) {
        records.append(local)
        for (value, size) in values { records += Self.bytes(value, size: size, bigEndian: bigEndian[Int(local)]) }
        records += raw
    }

    /// A data message for local type 0–3 with a compressed timestamp header (`seconds` the
    /// low 5 bits of its time).
    mutating func compressed(local: UInt8, seconds: UInt8, _ values: [(Int64, Int)]) {
        records.append(0x80 | local << 5 | seconds & 0x1F)
        for (value, size) in values { records += Self.bytes(value, size: size, bigEndian: bigEndian[Int(local)]) }
    }

    /// A record (local type 0, defined with ``recordFields``) at FIT time `time`, at `lat`,
    /// `lon` degrees, altitude `altitude` m and speed `speed` m/s.
    mutating func record(time: Int64, lat: Double, lon: Double, altitude: Double = 20, speed: Double = 5.5) {
        data(
            local: 0,
            [
                (time, 4), (Self.semicircles(lat), 4), (Self.semicircles(lon), 4),
                (Int64(((altitude + 500) * 5).rounded()), 2), (Int64((speed * 1000).rounded()), 2),
            ])
    }

    /// The whole file: header (14 bytes with its CRC, or 12), the records, the file CRC.
    /// `dataSize` overrides the size the header gives.
    func file(headerSize: Int = 14, dataSize: Int? = nil) -> [UInt8] {
        var header: [UInt8] = [UInt8(headerSize), 0x10]
        header += Self.bytes(2132, size: 2, bigEndian: false)
        header += Self.bytes(Int64(dataSize ?? records.count), size: 4, bigEndian: false)
        header += Array(".FIT".utf8)
        if headerSize == 14 { header += Self.bytes(Int64(Self.crc(header)), size: 2, bigEndian: false) }
        let body = header + records
        return body + Self.bytes(Int64(Self.crc(body)), size: 2, bigEndian: false)
    }

    static func semicircles(_ degrees: Double) -> Int64 {
        Int64((degrees * 2_147_483_648 / 180).rounded())
    }

    static func bytes(_ value: Int64, size: Int, bigEndian: Bool) -> [UInt8] {
        let little = (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        return bigEndian ? little.reversed() : little
    }

    /// CRC-16/ARC, bit by bit (written independently of the reader's table).
    static func crc(_ bytes: [UInt8]) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        }
        return crc
    }
}
