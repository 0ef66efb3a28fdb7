package import FencepostFormats
import Foundation

/// An Apple Health export on disk: `export.zip` read in place (nothing unpacked to disk), or an
/// unpacked `export.xml` (optionally gzip-compressed) with its `workout-routes/` folder beside it.
package final class HealthExportFile {
    package let path: String
    private let archive: ZipArchive?
    /// Inside the archive (`apple_health_export/`) or on disk, where `export.xml` is.
    private let base: String
    private let xmlEntry: ZipEntry?

    package init(path: String) throws(TraceReadError) {
        self.path = path
        let handle = try InputFile.open(path)
        let magic = (try? handle.read(upToCount: 4)).map { [UInt8]($0) } ?? []
        try? handle.close()
        guard magic == [0x50, 0x4B, 0x03, 0x04] else {
            archive = nil
            xmlEntry = nil
            base = (path as NSString).deletingLastPathComponent
            return
        }
        let archive = try ZipArchive(path: path)
        guard
            let entry = archive.entries.first(where: {
                !$0.isDirectory && ($0.name as NSString).lastPathComponent == "export.xml"
            })
        else {
            throw TraceReadError(file: path, line: nil, reason: "the archive holds no export.xml")
        }
        self.archive = archive
        self.xmlEntry = entry
        self.base = (entry.name as NSString).deletingLastPathComponent
    }

    /// The name errors give the document: `export.zip:apple_health_export/export.xml`.
    package var documentName: String { xmlEntry.map { "\(path):\($0.name)" } ?? path }

    /// `export.xml` as a stream of chunks.
    package func document() throws(TraceReadError) -> ByteSource {
        guard let xmlEntry, let archive else { return try ByteSource(path: path) }
        return try Self.stream(xmlEntry, of: archive)
    }

    /// A file the export refers to (a workout route), by its `FileReference` path.
    package func referencedFile(_ reference: String) throws(TraceReadError) -> ByteSource {
        let relative = reference.hasPrefix("/") ? String(reference.dropFirst()) : reference
        guard let archive else {
            return try ByteSource(path: (base as NSString).appendingPathComponent(relative))
        }
        let entryPath = base.isEmpty ? relative : base + "/" + relative
        guard let entry = archive[entryPath] else {
            throw TraceReadError(
                file: "\(path):\(entryPath)", line: nil, reason: "referenced by the export but not in the archive")
        }
        return try Self.stream(entry, of: archive)
    }

    /// An entry pulled chunk by chunk as the reader asks, on the reader's thread.
    private static func stream(_ entry: ZipEntry, of archive: ZipArchive) throws(TraceReadError) -> ByteSource {
        let reader = try archive.reader(for: entry)
        return ByteSource(name: reader.name, size: Int(clamping: entry.uncompressedSize)) {
            () throws(TraceReadError) -> [UInt8]? in
            try reader.next()
        }
    }
}
