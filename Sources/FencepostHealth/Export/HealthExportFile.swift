package import FencepostFormats
import Foundation
import ZIPFoundation

/// An Apple Health export on disk: `export.zip` read in place (nothing unpacked to disk), or an
/// unpacked `export.xml` (optionally gzip-compressed) with its `workout-routes/` folder beside it.
package final class HealthExportFile {
    package let path: String
    private let archive: Archive?
    /// Inside the archive (`apple_health_export/`) or on disk, where `export.xml` is.
    private let base: String
    private let xmlEntry: String?

    package init(path: String) throws(TraceReadError) {
        self.path = path
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be opened for reading" : "no such file"
            throw TraceReadError(file: path, line: nil, reason: reason)
        }
        let magic = (try? handle.read(upToCount: 4)).map { [UInt8]($0) } ?? []
        try? handle.close()
        guard magic == [0x50, 0x4B, 0x03, 0x04] else {
            archive = nil
            xmlEntry = nil
            base = (path as NSString).deletingLastPathComponent
            return
        }
        let archive: Archive
        do {
            archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        } catch {
            throw TraceReadError(file: path, line: nil, reason: "not a readable zip archive (truncated?): \(error)")
        }
        guard let entry = archive.first(where: { ($0.path as NSString).lastPathComponent == "export.xml" }) else {
            throw TraceReadError(file: path, line: nil, reason: "the archive holds no export.xml")
        }
        self.archive = archive
        self.xmlEntry = entry.path
        self.base = (entry.path as NSString).deletingLastPathComponent
    }

    /// The name errors give the document: `export.zip:apple_health_export/export.xml`.
    package var documentName: String { xmlEntry.map { "\(path):\($0)" } ?? path }

    /// `export.xml` as a stream of chunks.
    package func document() throws(TraceReadError) -> ByteSource {
        guard let xmlEntry, let archive, let entry = archive[xmlEntry] else { return try ByteSource(path: path) }
        try checkFits(entry, name: documentName)
        let stream = ZipEntryStream(archivePath: path, entryPath: xmlEntry, name: documentName)
        return ByteSource(name: documentName, size: Int(entry.uncompressedSize)) {
            () throws(TraceReadError) -> [UInt8]? in
            try stream.next()
        }
    }

    /// A file the export refers to (a workout route), by its `FileReference` path; small enough
    /// to read whole.
    package func referencedFile(_ reference: String) throws(TraceReadError) -> ByteSource {
        let relative = reference.hasPrefix("/") ? String(reference.dropFirst()) : reference
        guard let archive else {
            return try ByteSource(path: (base as NSString).appendingPathComponent(relative))
        }
        let entryPath = base.isEmpty ? relative : base + "/" + relative
        let name = "\(path):\(entryPath)"
        guard let entry = archive[entryPath] else {
            throw TraceReadError(file: name, line: nil, reason: "referenced by the export but not in the archive")
        }
        try checkFits(entry, name: name)
        var bytes: [UInt8] = []
        do {
            _ = try archive.extract(entry) { bytes.append(contentsOf: $0) }
        } catch {
            throw TraceReadError(file: name, line: nil, reason: "corrupt zip data: \(error)")
        }
        return ByteSource(name: name, bytes: bytes)
    }
}

extension HealthExportFile {
    /// Refuses a stored (uncompressed) entry that declares more bytes than the archive holds:
    /// ZIPFoundation reads such an entry a chunk at a time until its declared size, past the end
    /// of the file.
    private func checkFits(_ entry: Entry, name: String) throws(TraceReadError) {
        guard !entry.isCompressed else { return }
        let fileSize =
            ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.uint64Value ?? 0
        guard entry.uncompressedSize <= fileSize else {
            throw TraceReadError(
                file: name, line: nil,
                reason:
                    "corrupt zip archive: the entry declares \(entry.uncompressedSize) bytes, the archive has \(fileSize)"
            )
        }
    }
}

/// An archive entry inflated on a thread of its own, handed over in chunks through a short
/// queue: ZIPFoundation pushes chunks, the XML reader pulls them, memory stays flat. Dropping
/// the stream stops the thread and waits for it (one chunk's inflating), so the archive is
/// closed and its buffers freed before the reader's owner goes on; but never more than a few
/// seconds: on Linux, ZIPFoundation inflates until the deflate stream ends, whatever the
/// entry's size, and a damaged stream that never ends keeps its thread reading at the end of
/// the file (found by fuzzing; a reader of our own over the archive is the fix still to make).
private final class ZipEntryStream {
    private struct Cancelled: Error {}

    private let chunks = BlockingQueue<[UInt8]>(depth: 4)
    private let ended = DispatchSemaphore(value: 0)

    init(archivePath: String, entryPath: String, name: String) {
        let chunks = chunks
        let ended = ended
        let thread = Thread {
            defer { ended.signal() }
            do {
                let archive = try Archive(url: URL(fileURLWithPath: archivePath), accessMode: .read)
                guard let entry = archive[entryPath] else { throw Archive.ArchiveError.invalidEntryPath }
                _ = try archive.extract(entry, bufferSize: 1 << 18) { data in
                    guard chunks.put([UInt8](data)) else { throw Cancelled() }
                }
                chunks.finish(failure: nil)
            } catch is Cancelled {
                chunks.finish(failure: nil)
            } catch {
                chunks.finish(
                    failure: TraceReadError(file: name, line: nil, reason: "corrupt or truncated zip data: \(error)"))
            }
        }
        thread.start()
    }

    deinit {
        chunks.cancel()
        _ = ended.wait(timeout: .now() + 5)
    }

    func next() throws(TraceReadError) -> [UInt8]? {
        try chunks.take()
    }
}
