import FencepostCore
import Foundation

/// A file imported whole, by the SHA-256 of its content: the same content is imported once,
/// whatever its name or however often it is dropped.
package struct ImportedFile: Sendable, Hashable {
    package enum Kind: String, Sendable {
        /// A location trace, through ingest.
        case trace
        /// An Apple Health export, through health import.
        case health
    }

    /// Lower-case hex.
    package var sha256: String
    /// The file's name when it was imported.
    package var name: String
    package var kind: Kind
    package var bytes: Int
    /// RFC 3339 UTC; set when recorded.
    package var importedAt: String

    package init(sha256: String, name: String, kind: Kind, bytes: Int, importedAt: String = "") {
        self.sha256 = sha256
        self.name = name
        self.kind = kind
        self.bytes = bytes
        self.importedAt = importedAt
    }
}

extension Store {
    /// The record of the file with this content, if one was imported.
    package func importedFile(sha256: String) async throws -> ImportedFile? {
        try await read { tx in
            try await tx.row(
                "SELECT sha256, name, kind, bytes, imported_at FROM imported_files WHERE sha256 = ?", sha256
            ).map { row in
                ImportedFile(
                    sha256: row["sha256"], name: row["name"], kind: ImportedFile.Kind(rawValue: row["kind"]) ?? .trace,
                    bytes: row["bytes"], importedAt: row["imported_at"])
            }
        }
    }

    /// Records `file` as imported, inside the transaction of its events; false (and nothing
    /// written) when a file with the same content already was.
    static func record(_ file: ImportedFile, in tx: any SQLTransaction) async throws -> Bool {
        try await tx.execute(
            "INSERT INTO imported_files (sha256, name, kind, bytes, imported_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            file.sha256, file.name, file.kind.rawValue, file.bytes, Timestamp.format(Date())) > 0
    }
}
