/// What a FIT definition message says of the data messages of one local type that follow it:
/// their global message number, byte order, and where each field lies in them.
struct FITDefinition {
    struct Field {
        var number: UInt8
        /// The field's offset in the message's content (after its one-byte header).
        var offset: Int
        var size: Int
        /// The base type's number (the low 5 bits of the base type byte).
        var baseType: UInt8
    }

    var globalMessage: UInt16
    var bigEndian: Bool
    var fields: [Field]
    /// Bytes of content in each data message: every field, and every developer field.
    var messageSize: Int

    /// The field numbered `number`, if the messages carry it.
    func field(_ number: UInt8) -> Field? {
        fields.first { $0.number == number }
    }

    /// Reads a definition message's content (after its record header at `start`):
    ///
    /// | bytes | meaning |
    /// |---|---|
    /// | 0 | reserved |
    /// | 1 | architecture: 0 little-endian, 1 big-endian |
    /// | 2–3 | global message number |
    /// | 4 | number of fields, then 3 bytes each: field number, size, base type |
    /// | … | with the developer flag: number of developer fields, then 3 bytes each: number, size, index |
    static func read(_ stream: inout FITByteStream, start: Int, developerFields: Bool, dataEnd: Int)
        throws(TraceReadError) -> FITDefinition
    {
        func take(_ count: Int, _ what: String) throws(TraceReadError) -> ArraySlice<UInt8> {
            guard stream.offset + count <= dataEnd else {
                throw FITTraceReader.failure(
                    stream.name, at: start,
                    "the definition's \(what) runs past the end of the records (byte \(dataEnd))")
            }
            guard let bytes = try stream.take(count) else {
                throw FITTraceReader.failure(stream.name, at: start, "the file ends inside a definition message")
            }
            return bytes
        }
        let fixed = try take(5, "header")
        let architecture = fixed[fixed.startIndex + 1]
        guard architecture <= 1 else {
            throw FITTraceReader.failure(
                stream.name, at: start, "architecture \(architecture) (0, little-endian, or 1, big-endian, expected)")
        }
        let bigEndian = architecture == 1
        let global = UInt16(
            FITValue.unsigned(fixed[(fixed.startIndex + 2)..<(fixed.startIndex + 4)], bigEndian: bigEndian))
        let count = Int(fixed[fixed.startIndex + 4])
        let layout = try take(3 * count, "field list")
        var fields: [Field] = []
        fields.reserveCapacity(count)
        var size = 0
        for index in 0..<count {
            let base = layout.startIndex + 3 * index
            let fieldSize = Int(layout[base + 1])
            fields.append(Field(number: layout[base], offset: size, size: fieldSize, baseType: layout[base + 2] & 0x1F))
            size += fieldSize
        }
        if developerFields {
            let countByte = try take(1, "developer field count")
            let developerCount = Int(countByte[countByte.startIndex])
            let developerLayout = try take(3 * developerCount, "developer field list")
            for index in 0..<developerCount {
                size += Int(developerLayout[developerLayout.startIndex + 3 * index + 1])
            }
        }
        return FITDefinition(globalMessage: global, bigEndian: bigEndian, fields: fields, messageSize: size)
    }
}

/// Values as FIT writes them: unsigned and signed integers of 1, 2, 4 or 8 bytes in either
/// byte order, each type with its own "invalid" value (all ones for unsigned, the largest
/// positive for signed).
enum FITValue {
    static func unsigned(_ bytes: ArraySlice<UInt8>, bigEndian: Bool) -> UInt64 {
        var value: UInt64 = 0
        if bigEndian {
            for byte in bytes { value = value << 8 | UInt64(byte) }
        } else {
            for byte in bytes.reversed() { value = value << 8 | UInt64(byte) }
        }
        return value
    }

    /// The size in bytes of a base type's values (by the base type's number), nil for one FIT
    /// does not define.
    static func size(ofBaseType number: UInt8) -> Int? {
        switch number {
        case 0, 1, 2, 7, 10, 13: return 1  // enum, sint8, uint8, string, uint8z, byte
        case 3, 4, 11: return 2  // sint16, uint16, uint16z
        case 5, 6, 8, 12: return 4  // sint32, uint32, float32, uint32z
        case 9, 14, 15, 16: return 8  // float64, sint64, uint64, uint64z
        default: return nil
        }
    }
}
