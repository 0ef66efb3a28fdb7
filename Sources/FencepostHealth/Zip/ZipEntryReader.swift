package import FencepostFormats

/// One entry's uncompressed bytes, pulled a chunk at a time on the caller's thread: no thread,
/// no queue, memory of one compressed and one uncompressed chunk.
///
/// Everything is bounded by the central directory's figures, checked against the file on
/// opening: at most the compressed size is read (and it lies inside the file), at most the
/// uncompressed size is produced. A deflate stream that ends before either size is reached,
/// holds more than the uncompressed size, or has not ended when its compressed bytes are
/// used up is refused, as is a CRC-32 that differs from the directory's; none is waited on.
/// The check comes with the last chunk, so a reader that reads to the end sees it.
package final class ZipEntryReader {
    /// `archive.zip:entry/path`, what errors name.
    package let name: String
    private let entry: ZipEntry
    private let file: ZipFile
    private let chunkSize: Int
    /// Nil for a stored entry.
    private let inflater: RawInflater?
    /// The next compressed byte to read, and how many are left.
    private var inputOffset: UInt64
    private var inputLeft: UInt64
    private var produced: UInt64 = 0
    private var checksum = ZipChecksum()
    private var finished = false
    /// The error that ended the reading, thrown again if asked for more.
    private var failed: TraceReadError?

    private static let localHeaderLength = 30

    init(entry: ZipEntry, in file: ZipFile, name: String, chunkSize: Int) throws(TraceReadError) {
        precondition(chunkSize > 0)
        func failure(_ reason: String) -> TraceReadError { TraceReadError(file: name, line: nil, reason: reason) }
        self.name = name
        self.entry = entry
        self.file = file
        self.chunkSize = chunkSize
        guard !entry.isEncrypted else { throw failure("encrypted zip entries are not supported") }
        switch entry.method {
        case ZipEntry.stored:
            guard entry.compressedSize == entry.uncompressedSize else {
                throw failure(
                    "corrupt zip entry: stored, yet its sizes differ (\(entry.compressedSize) bytes in the archive, "
                        + "\(entry.uncompressedSize) declared)")
            }
            inflater = nil
        case ZipEntry.deflated:
            inflater = try RawInflater(name: name)
        default:
            throw failure("zip compression method \(entry.method) is not supported (only stored and deflate)")
        }
        let headerOffset = entry.localHeaderOffset
        guard file.holds(UInt64(Self.localHeaderLength), at: headerOffset) else {
            throw failure(
                "corrupt zip archive: the entry's local header (byte \(headerOffset)) is past the end of the archive "
                    + "(\(file.size) bytes)")
        }
        let header = try file.read(Self.localHeaderLength, at: headerOffset, for: name)
        guard header.zipUInt32(at: 0) == ZipSignature.localHeader else {
            throw failure("corrupt zip archive: no local header at byte \(headerOffset), where the directory puts it")
        }
        let dataOffset =
            headerOffset + UInt64(Self.localHeaderLength) + UInt64(header.zipUInt16(at: 26))
            + UInt64(header.zipUInt16(at: 28))
        guard file.holds(entry.compressedSize, at: dataOffset) else {
            throw failure(
                "corrupt zip archive: the entry's \(entry.compressedSize) bytes from byte \(dataOffset) run past "
                    + "the end of the archive (\(file.size) bytes)")
        }
        inputOffset = dataOffset
        inputLeft = entry.compressedSize
    }

    /// The next chunk of uncompressed bytes, nil after the last one.
    package func next() throws(TraceReadError) -> [UInt8]? {
        if let failed { throw failed }
        guard !finished else { return nil }
        do {
            if let inflater { return try nextInflated(inflater) }
            return try nextStored()
        } catch {
            failed = error
            throw error
        }
    }

    // MARK: - Stored

    private func nextStored() throws(TraceReadError) -> [UInt8]? {
        guard inputLeft > 0 else {
            try finish()
            return nil
        }
        let chunk = try readInput()
        produced += UInt64(chunk.count)
        checksum.update(chunk[...])
        if inputLeft == 0 { try finish() }
        return chunk
    }

    // MARK: - Deflated

    private func nextInflated(_ inflater: RawInflater) throws(TraceReadError) -> [UInt8]? {
        let left = entry.uncompressedSize - produced
        let capacity = Int(min(UInt64(chunkSize), left))
        // When this chunk may be the last, one byte of room more than may come: a byte there
        // means the stream holds too much, and with nothing left to produce, that byte of room
        // is what lets zlib reach the stream's end.
        let probe = UInt64(capacity) == left ? 1 : 0
        var chunk = [UInt8](repeating: 0, count: capacity + probe)
        var filled = 0
        while true {
            if inflater.pendingInput == 0, inputLeft > 0 { inflater.feed(try readInput()) }
            let step = try inflater.inflate(into: &chunk, at: filled)
            filled += step.produced
            guard filled <= capacity else {
                throw failure(
                    "corrupt zip entry: its deflate stream holds more than the \(entry.uncompressedSize) bytes declared"
                )
            }
            if step.ended {
                let unused = UInt64(inflater.pendingInput) + inputLeft
                guard unused == 0 else {
                    throw failure(
                        "corrupt zip entry: its deflate stream ends \(unused) bytes before its \(entry.compressedSize) "
                            + "compressed bytes do")
                }
                produced += UInt64(filled)
                guard produced == entry.uncompressedSize else {
                    throw failure(
                        "corrupt zip entry: its deflate stream ends after \(produced) bytes; "
                            + "\(entry.uncompressedSize) are declared")
                }
                checksum.update(chunk[..<filled])
                try finish()
                return filled > 0 ? Array(chunk[..<filled]) : nil
            }
            if capacity > 0, filled == capacity {
                produced += UInt64(filled)
                chunk.removeLast(probe)
                checksum.update(chunk[...])
                return chunk
            }
            if step.consumed == 0, step.produced == 0 {
                // zlib took nothing and gave nothing: it needs input, and when every compressed
                // byte has been fed that is the end of the entry, not a reason to wait.
                guard inflater.pendingInput == 0, inputLeft == 0 else {
                    throw failure("corrupt zip entry: inflating makes no progress")
                }
                throw failure(
                    "corrupt zip entry: its deflate stream does not end within its \(entry.compressedSize) "
                        + "compressed bytes (\(produced + UInt64(filled)) of \(entry.uncompressedSize) bytes inflated)")
            }
        }
    }

    // MARK: - Shared

    /// The next piece of the entry's data in the file, at most a chunk.
    private func readInput() throws(TraceReadError) -> [UInt8] {
        let count = Int(min(UInt64(chunkSize), inputLeft))
        let bytes = try file.read(count, at: inputOffset, for: name)
        inputOffset += UInt64(count)
        inputLeft -= UInt64(count)
        return bytes
    }

    /// All bytes are produced: they must be the ones the directory's checksum describes.
    private func finish() throws(TraceReadError) {
        finished = true
        guard checksum.value == entry.crc32 else {
            throw failure(
                "corrupt zip entry: CRC-32 mismatch (the data's is \(hex(checksum.value)), "
                    + "the central directory says \(hex(entry.crc32)))")
        }
    }

    private func failure(_ reason: String) -> TraceReadError {
        TraceReadError(file: name, line: nil, reason: reason)
    }

    private func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
