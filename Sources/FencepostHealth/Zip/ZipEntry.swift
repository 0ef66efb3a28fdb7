/// One file of an archive, as the central directory describes it. The central directory is
/// what counts, not the local header: a writer that streams may leave the local header's
/// sizes and checksum zero and put the real ones in a data descriptor after the data.
package struct ZipEntry: Sendable, Equatable {
    /// The path inside the archive (`apple_health_export/export.xml`).
    package var name: String
    /// How the data is compressed: ``ZipEntry/stored`` and ``ZipEntry/deflated`` are read.
    package var method: UInt16
    /// The general purpose bit flags; bit 0 is encryption.
    package var flags: UInt16
    /// CRC-32 of the uncompressed bytes.
    package var crc32: UInt32
    package var compressedSize: UInt64
    package var uncompressedSize: UInt64
    /// Where the entry's local header starts; its data follows the header's name and extra field.
    package var localHeaderOffset: UInt64

    /// Method 0: the bytes as they are.
    package static let stored: UInt16 = 0
    /// Method 8: raw deflate (RFC 1951).
    package static let deflated: UInt16 = 8

    /// Bit 0 (bit 6, strong encryption, is only ever set with it).
    package var isEncrypted: Bool { flags & 0x0001 != 0 }
    /// A folder: a name ending in a slash, with no data.
    package var isDirectory: Bool { name.hasSuffix("/") }
}
