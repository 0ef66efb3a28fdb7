import Crypto
import FencepostCore
package import FencepostFormats
package import FencepostHealth
package import FencepostStore
import Foundation

/// One whole file imported into the store at most once, by the SHA-256 of its content: a trace
/// through ingest, an Apple Health export through health import, told apart by content. The
/// record of the content commits in the transaction of the file's events, so a crash, a
/// restart, a second importer or the same file under another name imports nothing twice.
package struct FileImport {
    /// How traces are read and ingested, and health exports imported.
    package struct Options: Sendable {
        package var reader: TraceReaderOptions
        package var format: TraceFormat?
        package var ingest: IngestOptions
        package var health: HealthImportOptions

        package init(
            reader: TraceReaderOptions = TraceReaderOptions(), format: TraceFormat? = nil,
            ingest: IngestOptions = IngestOptions(),
            health: HealthImportOptions = HealthImportOptions()
        ) {
            self.reader = reader
            self.format = format
            self.ingest = ingest
            self.health = health
        }
    }

    /// What became of a file.
    package enum Outcome: Sendable {
        /// A trace, ingested: what it did, against how many monitored regions.
        case ingested(IngestSummary, regions: Int)
        /// An Apple Health export, imported.
        case healthImported(HealthExportImport.Outcome)
        /// The store already records this content (under the name and time given).
        case alreadyImported(ImportedFile)
        /// Refused: the file, line and reason, as the command line prints them; nothing of
        /// it was written.
        case refused(String)
    }

    private let store: Store
    private let options: Options
    /// Kept between files: devices and the monitor carry over, and the store is checked for
    /// changes by other writers at each file.
    private let session: IngestSession

    package init(store: Store, options: Options) async throws {
        self.store = store
        self.options = options
        self.session = try await IngestSession(store: store, options: options.ingest)
    }

    /// Imports the file at `path` unless its content was imported before. Errors other than a
    /// refusal of the file (the store failing, the file vanishing) are thrown: the file is not
    /// to blame and may be tried again.
    package func run(path: String) async throws -> Outcome {
        let digest = try FileDigest(path: path)
        let name = (path as NSString).lastPathComponent
        if let earlier = try await store.importedFile(sha256: digest.sha256) { return .alreadyImported(earlier) }
        do {
            if try Self.isHealthExport(path) {
                let file = ImportedFile(sha256: digest.sha256, name: name, kind: .health, bytes: digest.bytes)
                guard
                    let outcome = try await HealthExportImport.run(
                        path: path, store: store, options: options.health, recording: file)
                else {
                    return .alreadyImported(try await store.importedFile(sha256: digest.sha256) ?? file)
                }
                return .healthImported(outcome)
            }
            let file = ImportedFile(sha256: digest.sha256, name: name, kind: .trace, bytes: digest.bytes)
            _ = session.restartSummary()
            var skipped: [String: Int] = [:]
            let isNew = try await session.ingest(recording: file) { [options] in
                var reader = try TraceOpener.open(
                    ByteSource(path: path), format: options.format, options: options.reader)
                return {
                    let fix = try reader.next()
                    if fix == nil { skipped = reader.skipped }
                    return fix
                }
            }
            guard isNew else { return .alreadyImported(try await store.importedFile(sha256: digest.sha256) ?? file) }
            var summary = session.restartSummary()
            summary.skipped = skipped
            summary.devices.formUnion(summary.byDevice.keys)
            return .ingested(summary, regions: session.regionCount)
        } catch let error as TraceReadError {
            return .refused("error: \(error) (nothing of it was written)")
        }
    }

    /// Whether the file is an Apple Health export: a zip archive (traces never are), or XML
    /// whose root is `HealthData`.
    static func isHealthExport(_ path: String) throws -> Bool {
        let head = try ByteSource(path: path).peek()
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return true }
        let text = String(decoding: head.prefix(4096), as: UTF8.self)
        return text.contains("<HealthData")
    }
}

/// The SHA-256 of a file's bytes (as stored, not inflated), read a chunk at a time.
struct FileDigest {
    var sha256: String
    var bytes: Int

    init(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        defer { try? handle.close() }
        var hash = SHA256()
        var bytes = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hash.update(data: chunk)
            bytes += chunk.count
        }
        self.sha256 = hash.finalize().map { String(format: "%02x", $0) }.joined()
        self.bytes = bytes
    }
}
