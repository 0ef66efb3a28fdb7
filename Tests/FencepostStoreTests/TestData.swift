import Foundation

/// Where test inputs live: the project's own fixtures, and the third-party data in ../shared.
enum TestData {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared/data` beside the checkout; tests that need it are skipped when it is absent.
    static let shared = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data")

    static var sharedAvailable: Bool {
        FileManager.default.fileExists(atPath: shared.path)
    }

    static func sharedFile(_ relativePath: String) -> String {
        shared.appendingPathComponent(relativePath).path
    }

    static func sharedData(_ relativePath: String) throws -> Data {
        try Data(contentsOf: shared.appendingPathComponent(relativePath))
    }
}
