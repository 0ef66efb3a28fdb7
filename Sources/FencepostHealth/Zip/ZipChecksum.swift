import CSystemZlib

/// The CRC-32 zip records for each entry's uncompressed bytes (zlib's `crc32`), kept as the
/// bytes go by.
struct ZipChecksum {
    private(set) var value: UInt32 = 0

    mutating func update(_ bytes: ArraySlice<UInt8>) {
        // zlib answers its initial value for a null buffer: an empty chunk changes nothing.
        guard !bytes.isEmpty else { return }
        value = bytes.withUnsafeBufferPointer { buffer in
            UInt32(truncatingIfNeeded: crc32(uLong(value), buffer.baseAddress, uInt(buffer.count)))
        }
    }
}
