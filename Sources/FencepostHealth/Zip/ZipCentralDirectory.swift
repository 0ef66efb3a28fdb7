import FencepostFormats

/// The central directory's entries: their names, methods, flags, checksums and sizes, and
/// where each one's local header is. Read whole (its size was checked against the file's);
/// each entry's fields are checked to lie inside it before they are read.
enum ZipCentralDirectory {
    static func entries(of file: ZipFile, at end: ZipEndRecord) throws(TraceReadError) -> [ZipEntry] {
        let bytes = try file.read(Int(end.directorySize), at: end.directoryOffset, for: file.path)
        var entries: [ZipEntry] = []
        entries.reserveCapacity(Int(end.entryCount))
        var position = 0
        for number in 0..<end.entryCount {
            func failure(_ reason: String) -> TraceReadError {
                TraceReadError(
                    file: file.path, line: nil,
                    reason: "corrupt zip archive: central directory entry \(number + 1) of \(end.entryCount) "
                        + "(byte \(end.directoryOffset + UInt64(position))) \(reason)")
            }
            guard position + ZipEndRecord.minimumEntryLength <= bytes.count,
                bytes.zipUInt32(at: position) == ZipSignature.centralDirectoryEntry
            else { throw failure("is missing or damaged") }
            let nameStart = position + ZipEndRecord.minimumEntryLength
            let extraStart = nameStart + Int(bytes.zipUInt16(at: position + 28))
            let extraEnd = extraStart + Int(bytes.zipUInt16(at: position + 30))
            let next = extraEnd + Int(bytes.zipUInt16(at: position + 32))
            guard next <= bytes.count else { throw failure("runs past the end of the central directory") }
            var entry = ZipEntry(
                name: String(decoding: bytes[nameStart..<extraStart], as: UTF8.self),
                method: bytes.zipUInt16(at: position + 10),
                flags: bytes.zipUInt16(at: position + 8),
                crc32: bytes.zipUInt32(at: position + 16),
                compressedSize: UInt64(bytes.zipUInt32(at: position + 20)),
                uncompressedSize: UInt64(bytes.zipUInt32(at: position + 24)),
                localHeaderOffset: UInt64(bytes.zipUInt32(at: position + 42)))
            guard readZip64Fields(bytes, from: extraStart, to: extraEnd, into: &entry) else {
                throw failure("(\(entry.name)) says its sizes or offset are in a ZIP64 extra field it lacks")
            }
            entries.append(entry)
            position = next
        }
        return entries
    }

    /// Replaces the 32-bit fields at their ZIP64 marker with the 64-bit values of the ZIP64
    /// extra field (id 1), which holds only those, in this order: uncompressed size,
    /// compressed size, local header offset. False when a marked field has no value there.
    private static func readZip64Fields(_ bytes: [UInt8], from start: Int, to end: Int, into entry: inout ZipEntry)
        -> Bool
    {
        let marker = UInt64(zip64Marker32)
        var needed = [entry.uncompressedSize, entry.compressedSize, entry.localHeaderOffset].filter { $0 == marker }
            .count
        guard needed > 0 else { return true }
        var cursor = start
        while cursor + 4 <= end {
            let id = bytes.zipUInt16(at: cursor)
            let fieldEnd = cursor + 4 + Int(bytes.zipUInt16(at: cursor + 2))
            guard fieldEnd <= end else { return false }
            if id == 0x0001 {
                var value = cursor + 4
                func take(_ field: inout UInt64) {
                    guard field == marker, value + 8 <= fieldEnd else { return }
                    field = bytes.zipUInt64(at: value)
                    value += 8
                    needed -= 1
                }
                take(&entry.uncompressedSize)
                take(&entry.compressedSize)
                take(&entry.localHeaderOffset)
                return needed == 0
            }
            cursor = fieldEnd
        }
        return false
    }
}
