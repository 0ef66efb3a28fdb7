import FencepostFormats

/// Where an archive's central directory lies and how many entries it lists, from the end of
/// central directory record, or from the ZIP64 one when the archive has it (exports over
/// 4 GiB or 65,535 files). Every figure is checked against the file's real size, so what
/// follows reads only inside the file and lists only as many entries as could fit.
struct ZipEndRecord {
    var entryCount: UInt64
    var directoryOffset: UInt64
    var directorySize: UInt64

    /// The fixed part of the end of central directory record; a comment of up to 65,535 bytes
    /// may follow it, so it is looked for in the file's last 65,557 bytes.
    private static let length = 22
    private static let zip64Length = 56
    private static let locatorLength = 20
    /// The smallest central directory entry: its fixed fields with an empty name.
    static let minimumEntryLength = 46

    init(reading file: ZipFile) throws(TraceReadError) {
        func failure(_ reason: String) -> TraceReadError {
            TraceReadError(file: file.path, line: nil, reason: reason)
        }
        guard file.size >= UInt64(Self.length) else {
            throw failure("not a zip archive (truncated?): \(file.size) bytes, too short for its end record")
        }
        let tailLength = Int(min(file.size, UInt64(Self.length + 0xFFFF)))
        let tailStart = file.size - UInt64(tailLength)
        let tail = try file.read(tailLength, at: tailStart, for: file.path)
        // The last signature whose record (with its comment) fits in the file: scanning back
        // from the end finds the real record before any look-alike in the data.
        var found: Int?
        var index = tailLength - Self.length
        while index >= 0 {
            if tail.zipUInt32(at: index) == ZipSignature.endOfCentralDirectory,
                index + Self.length + Int(tail.zipUInt16(at: index + 20)) <= tailLength
            {
                found = index
                break
            }
            index -= 1
        }
        guard let found else {
            throw failure(
                "not a zip archive (truncated?): no end of central directory record in its last \(tailLength) bytes")
        }
        let recordOffset = tailStart + UInt64(found)
        var disk = UInt32(tail.zipUInt16(at: found + 4))
        var directoryDisk = UInt32(tail.zipUInt16(at: found + 6))
        var entriesOnDisk = UInt64(tail.zipUInt16(at: found + 8))
        entryCount = UInt64(tail.zipUInt16(at: found + 10))
        directorySize = UInt64(tail.zipUInt32(at: found + 12))
        directoryOffset = UInt64(tail.zipUInt32(at: found + 16))
        // Where the central directory must end: at the first record after it.
        var directoryEnd = recordOffset

        if recordOffset >= UInt64(Self.locatorLength) {
            let locatorOffset = recordOffset - UInt64(Self.locatorLength)
            let locator = try file.read(Self.locatorLength, at: locatorOffset, for: file.path)
            if locator.zipUInt32(at: 0) == ZipSignature.zip64Locator {
                let zip64Offset = locator.zipUInt64(at: 8)
                guard zip64Offset <= locatorOffset, locatorOffset - zip64Offset >= UInt64(Self.zip64Length) else {
                    throw failure(
                        "corrupt zip archive: its ZIP64 end record is said to be at byte \(zip64Offset), "
                            + "which does not leave room for it before the locator at byte \(locatorOffset)")
                }
                let zip64 = try file.read(Self.zip64Length, at: zip64Offset, for: file.path)
                guard zip64.zipUInt32(at: 0) == ZipSignature.zip64EndOfCentralDirectory else {
                    throw failure(
                        "corrupt zip archive: no ZIP64 end record at byte \(zip64Offset), where its locator points")
                }
                disk = zip64.zipUInt32(at: 16)
                directoryDisk = zip64.zipUInt32(at: 20)
                entriesOnDisk = zip64.zipUInt64(at: 24)
                entryCount = zip64.zipUInt64(at: 32)
                directorySize = zip64.zipUInt64(at: 40)
                directoryOffset = zip64.zipUInt64(at: 48)
                directoryEnd = zip64Offset
            }
        }

        guard disk == 0, directoryDisk == 0, entriesOnDisk == entryCount else {
            throw failure("a zip archive split over several parts (disks) is not supported")
        }
        guard directorySize <= directoryEnd, directoryOffset <= directoryEnd - directorySize else {
            throw failure(
                "corrupt zip archive: its central directory (\(directorySize) bytes at byte \(directoryOffset)) "
                    + "runs past the end of the archive (the directory must end at byte \(directoryEnd); "
                    + "the file has \(file.size) bytes)")
        }
        guard entryCount <= directorySize / UInt64(Self.minimumEntryLength) else {
            throw failure(
                "corrupt zip archive: its central directory claims \(entryCount) entries in \(directorySize) bytes")
        }
    }
}
