package import FencepostFormats

/// A zip archive read in place: its central directory listed once on opening, then any entry
/// read as a stream of chunks (``ZipEntryReader``). Stored and deflated entries are read;
/// every offset, size and count the archive claims is checked against the file's real size,
/// so a damaged archive is refused with a reason and never read past its end.
package final class ZipArchive {
    package let path: String
    /// Every entry, in the central directory's order.
    package let entries: [ZipEntry]
    private let file: ZipFile
    /// The first entry of each name: a damaged or odd archive may list a name twice.
    private let byName: [String: Int]

    package init(path: String) throws(TraceReadError) {
        let file = try ZipFile(path: path)
        self.file = file
        self.path = path
        entries = try ZipCentralDirectory.entries(of: file, at: try ZipEndRecord(reading: file))
        var byName: [String: Int] = [:]
        for (index, entry) in entries.enumerated() where byName[entry.name] == nil { byName[entry.name] = index }
        self.byName = byName
    }

    package subscript(name: String) -> ZipEntry? {
        byName[name].map { entries[$0] }
    }

    /// A reader of `entry`'s uncompressed bytes, chunks of at most `chunkSize`; errors name
    /// `archive.zip:entry/path`.
    package func reader(for entry: ZipEntry, chunkSize: Int = 1 << 18) throws(TraceReadError) -> ZipEntryReader {
        try ZipEntryReader(entry: entry, in: file, name: "\(path):\(entry.name)", chunkSize: chunkSize)
    }
}
