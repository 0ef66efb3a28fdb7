public import Foundation

/// Where test inputs live: the project's own files, and the third-party data in ../shared.
public enum TestData {
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared/data` beside the checkout; tests that need it are skipped when it is absent.
    public static let shared = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data")

    public static var sharedAvailable: Bool {
        FileManager.default.fileExists(atPath: shared.path)
    }

    public static func sharedFile(_ relativePath: String) -> String {
        shared.appendingPathComponent(relativePath).path
    }

    public static func sharedData(_ relativePath: String) throws -> Data {
        try Data(contentsOf: shared.appendingPathComponent(relativePath))
    }
}

/// A temporary file holding `text`; call `remove()` when done.
public struct TemporaryFile {
    public let path: String

    public init(_ text: String, suffix: String = ".txt") throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-\(UUID().uuidString)\(suffix)").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
