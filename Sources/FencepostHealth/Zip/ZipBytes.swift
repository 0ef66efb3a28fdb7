/// Zip's numbers are little-endian whatever the machine. Callers check a record's length
/// before reading its fields, so an offset out of range here is a bug of ours and traps.
extension [UInt8] {
    func zipUInt16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    func zipUInt32(at offset: Int) -> UInt32 {
        UInt32(zipUInt16(at: offset)) | UInt32(zipUInt16(at: offset + 2)) << 16
    }

    func zipUInt64(at offset: Int) -> UInt64 {
        UInt64(zipUInt32(at: offset)) | UInt64(zipUInt32(at: offset + 4)) << 32
    }
}

/// The record signatures of the zip format (APPNOTE 4.3), as the little-endian numbers they
/// read as.
enum ZipSignature {
    static let localHeader: UInt32 = 0x0403_4B50
    static let centralDirectoryEntry: UInt32 = 0x0201_4B50
    static let endOfCentralDirectory: UInt32 = 0x0605_4B50
    static let zip64EndOfCentralDirectory: UInt32 = 0x0606_4B50
    static let zip64Locator: UInt32 = 0x0706_4B50
}

/// A 32-bit field at this value says the real value is in a ZIP64 record or extra field.
let zip64Marker32: UInt32 = 0xFFFF_FFFF
