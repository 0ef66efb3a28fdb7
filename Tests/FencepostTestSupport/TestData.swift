package import Foundation

/// Where test inputs live: the project's own files, and the third-party data in ../shared.
package enum TestData {
    package static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared/data` beside the checkout; tests that need it are skipped when it is absent.
    package static let shared = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data")

    package static var sharedAvailable: Bool {
        FileManager.default.fileExists(atPath: shared.path)
    }

    package static func sharedFile(_ relativePath: String) -> String {
        shared.appendingPathComponent(relativePath).path
    }

    package static func sharedData(_ relativePath: String) throws -> Data {
        try Data(contentsOf: shared.appendingPathComponent(relativePath))
    }
}

/// A temporary file holding `text`; call `remove()` when done.
package struct TemporaryFile {
    package let path: String

    package init(_ text: String, suffix: String = ".txt") throws {
        path =
            FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-\(UUID().uuidString)\(suffix)")
            .path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    package func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
