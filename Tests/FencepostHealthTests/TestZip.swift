@testable import FencepostHealth

/// Zip archives written byte by byte for the tests, with whatever a damaged archive needs:
/// sizes and checksums that lie, hand-made deflate streams, ZIP64 records.
struct TestZip {
    struct Entry {
        var name: String
        var method: UInt16
        var flags: UInt16 = 0
        /// The entry's data as the archive holds it (compressed for a deflated entry).
        var data: [UInt8]
        var crc32: UInt32
        var compressedSize: UInt64
        var uncompressedSize: UInt64

        /// `bytes` stored as they are, with their true checksum and sizes.
        static func stored(_ name: String, _ bytes: [UInt8]) -> Entry {
            Entry(
                name: name, method: ZipEntry.stored, data: bytes, crc32: TestZip.checksum(bytes),
                compressedSize: UInt64(bytes.count), uncompressedSize: UInt64(bytes.count))
        }

        /// `bytes` deflated into stored deflate blocks (RFC 1951 block type 0), with their true
        /// checksum and sizes: a valid deflate stream that needs no compressor.
        static func deflated(_ name: String, _ bytes: [UInt8]) -> Entry {
            let stream = TestZip.storedBlocks(bytes, final: true)
            return Entry(
                name: name, method: ZipEntry.deflated, data: stream, crc32: TestZip.checksum(bytes),
                compressedSize: UInt64(stream.count), uncompressedSize: UInt64(bytes.count))
        }
    }

    var entries: [Entry]
    /// Writes ZIP64 extra fields, a ZIP64 end record and its locator, as writers do past 4 GiB.
    var zip64 = false

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var checksum = ZipChecksum()
        checksum.update(bytes[...])
        return checksum.value
    }

    /// Deflate stored blocks holding `bytes`; the last one final when `final`.
    static func storedBlocks(_ bytes: [UInt8], final: Bool) -> [UInt8] {
        var stream: [UInt8] = []
        var start = 0
        repeat {
            let end = min(start + 0xFFFF, bytes.count)
            let length = UInt16(end - start)
            stream.append(final && end == bytes.count ? 1 : 0)  // BFINAL, BTYPE 00, then byte-aligned
            stream += le(length) + le(~length)
            stream += bytes[start..<end]
            start = end
        } while start < bytes.count
        return stream
    }

    func bytes() -> [UInt8] {
        var archive: [UInt8] = []
        var directory: [UInt8] = []
        for entry in entries {
            let offset = UInt64(archive.count)
            let name = Array(entry.name.utf8)
            let extra: [UInt8] =
                zip64
                ? le(UInt16(1)) + le(UInt16(24)) + le(entry.uncompressedSize) + le(entry.compressedSize) + le(offset)
                : []
            let small = { (value: UInt64) -> UInt32 in zip64 ? 0xFFFF_FFFF : UInt32(truncatingIfNeeded: value) }
            let common: [UInt8] =
                le(UInt16(zip64 ? 45 : 20)) + le(entry.flags) + le(entry.method) + le(UInt16(0)) + le(UInt16(0x21))
                + le(entry.crc32) + le(small(entry.compressedSize)) + le(small(entry.uncompressedSize))
                + le(UInt16(name.count))
            archive += le(ZipSignature.localHeader) + common + le(UInt16(0)) + name + entry.data
            directory +=
                le(ZipSignature.centralDirectoryEntry) + le(UInt16(0x0314)) + common + le(UInt16(extra.count))
                + le(UInt16(0)) + le(UInt16(0)) + le(UInt16(0)) + le(UInt32(0)) + le(small(offset)) + name + extra
        }
        let directoryOffset = UInt64(archive.count)
        archive += directory
        let count = UInt64(entries.count)
        if zip64 {
            let recordOffset = UInt64(archive.count)
            archive +=
                le(ZipSignature.zip64EndOfCentralDirectory) + le(UInt64(44)) + le(UInt16(45)) + le(UInt16(45))
                + le(UInt32(0)) + le(UInt32(0)) + le(count) + le(count) + le(UInt64(directory.count))
                + le(directoryOffset)
            archive += le(ZipSignature.zip64Locator) + le(UInt32(0)) + le(recordOffset) + le(UInt32(1))
            archive +=
                le(ZipSignature.endOfCentralDirectory) + le(UInt16(0)) + le(UInt16(0)) + le(UInt16(0xFFFF))
                + le(UInt16(0xFFFF)) + le(UInt32(0xFFFF_FFFF)) + le(UInt32(0xFFFF_FFFF)) + le(UInt16(0))
        } else {
            archive +=
                le(ZipSignature.endOfCentralDirectory) + le(UInt16(0)) + le(UInt16(0)) + le(UInt16(count))
                + le(UInt16(count)) + le(UInt32(directory.count)) + le(UInt32(directoryOffset)) + le(UInt16(0))
        }
        return archive
    }
}

/// `value`'s bytes, little-endian, as zip writes every number.
func le<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
    (0..<Value.bitWidth / 8).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
}
