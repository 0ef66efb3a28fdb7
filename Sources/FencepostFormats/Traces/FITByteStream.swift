/// The bytes of a FIT file as its decoder takes them: in order, with the offset reached (for
/// error messages) and the running CRC of everything consumed since ``resetCRC()``.
///
/// Holds the unread part of the current chunk and at most one message beyond it (a FIT
/// message is at most 255 fields of 255 bytes, plus as many developer fields), so memory stays
/// flat whatever the file's size.
struct FITByteStream {
    private var window: ChunkWindow
    /// Bytes consumed from the start of the (decompressed) input.
    private(set) var offset = 0
    /// The FIT CRC of the bytes consumed since the last ``resetCRC()``.
    private(set) var crc: UInt16 = 0

    init(source: ByteSource) {
        window = ChunkWindow(source: source)
    }

    var name: String { window.source.name }

    /// True when every byte has been consumed.
    mutating func atEnd() throws(TraceReadError) -> Bool {
        try !window.ensure(1)
    }

    /// Makes at least `count` unread bytes available; false when the input ends first.
    mutating func ensure(_ count: Int) throws(TraceReadError) -> Bool {
        try window.ensure(count)
    }

    /// The next `count` bytes, consumed; nil when the input ends first (nothing consumed).
    mutating func take(_ count: Int) throws(TraceReadError) -> ArraySlice<UInt8>? {
        guard try window.ensure(count) else { return nil }
        let bytes = window.buffer[window.position..<(window.position + count)]
        for byte in bytes { crc = FITCRC.update(crc, byte) }
        window.advance(by: count)
        offset += count
        return bytes
    }

    mutating func resetCRC() {
        crc = 0
    }
}

/// FIT's 16-bit CRC (CRC-16/ARC: the reflected polynomial 0xA001, starting from 0), which FIT
/// puts after the 14-byte header's first 12 bytes and after the whole file.
enum FITCRC {
    private static let table: [UInt16] = (0..<256).map { index in
        var value = UInt16(index)
        for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0xA001 : value >> 1 }
        return value
    }

    static func update(_ crc: UInt16, _ byte: UInt8) -> UInt16 {
        (crc >> 8) ^ table[Int((crc ^ UInt16(byte)) & 0xFF)]
    }

    static func of<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt16 {
        bytes.reduce(0) { update($0, $1) }
    }

    /// `0x1A2B` as `1A2B`, for messages.
    static func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}
