/// A FIT file header: 12 bytes, or 14 with a CRC of the first 12 (0 when the writer left it
/// out); larger sizes are read and their extra bytes skipped, as the profile allows.
///
/// | bytes | meaning |
/// |---|---|
/// | 0 | header size |
/// | 1 | protocol version |
/// | 2–3 | profile version (little-endian) |
/// | 4–7 | size of the records that follow, in bytes (little-endian) |
/// | 8–11 | `.FIT` |
/// | 12–13 | CRC of bytes 0–11 (little-endian), when the size is 14 or more |
struct FITHeader {
    /// Where the header starts in the input.
    var start: Int
    var size: Int
    /// Bytes of records between the header and the file's CRC.
    var dataSize: Int

    static let signature: [UInt8] = Array(".FIT".utf8)

    /// Whether `bytes` (the first bytes of an input) look like a FIT file's header.
    static func looksLikeFIT(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 12 && bytes[0] >= 12 && bytes[8..<12].elementsEqual(signature)
    }

    /// Reads a header at the stream's position, checking its signature and CRC: a header that
    /// fails either is refused, since its sizes are what every later offset depends on.
    /// A header after another file's CRC starts a chained file; bytes there that are not one
    /// are refused as such.
    static func read(_ stream: inout FITByteStream) throws(TraceReadError) -> FITHeader {
        let start = stream.offset
        func failure(_ reason: String) -> TraceReadError {
            TraceReadError(file: stream.name, line: nil, reason: "FIT header at byte \(start): \(reason)")
        }
        guard let fixed = try stream.take(12) else {
            throw failure(
                start == 0
                    ? "the file ends inside the header"
                    : "bytes after the file's CRC that are not another FIT file (too short for a header): "
                        + "a wrong data size in the header, or something appended")
        }
        let bytes = Array(fixed)
        let size = Int(bytes[0])
        guard size >= 12, bytes[8..<12].elementsEqual(signature) else {
            throw failure(
                start == 0
                    ? (size < 12 ? "header size \(size), below the 12 bytes FIT headers have" : "no \".FIT\" signature")
                    : "bytes after the file's CRC that are not another FIT file (\(describe(bytes[8..<12])) "
                        + "where a header has \".FIT\"): a wrong data size in the header, or something appended")
        }
        let dataSize = Int(FITValue.unsigned(bytes[4..<8], bigEndian: false))
        if size >= 14 {
            guard let crcBytes = try stream.take(2) else { throw failure("the file ends inside the header") }
            let stored = UInt16(FITValue.unsigned(crcBytes, bigEndian: false))
            let computed = FITCRC.of(bytes)
            if stored != 0, stored != computed {
                throw failure(
                    "CRC mismatch (stored 0x\(FITCRC.hex(stored)), computed 0x\(FITCRC.hex(computed))): "
                        + "the header is corrupt"
                )
            }
            if size > 14, try stream.take(size - 14) == nil { throw failure("the file ends inside the header") }
        } else if size > 12, try stream.take(size - 12) == nil {
            throw failure("the file ends inside the header")
        }
        return FITHeader(start: start, size: size, dataSize: dataSize)
    }

    /// Four bytes as text when they are printable ASCII, else in hex.
    static func describe(_ bytes: ArraySlice<UInt8>) -> String {
        if bytes.allSatisfy({ (0x20..<0x7F).contains($0) }) {
            return "\"" + String(decoding: bytes, as: UTF8.self) + "\""
        }
        return bytes.map { String($0, radix: 16) }.joined(separator: " ")
    }

    /// Where the records end and the file's CRC starts.
    var dataEnd: Int { start + size + dataSize }
}
