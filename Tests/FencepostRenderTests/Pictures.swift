import FencepostTestSupport
import Foundation

/// Pictures the tests draw, kept under `.build/pictures/` for a person to look at (render an
/// SVG to PNG with `rsvg-convert`).
enum Pictures {
    static let directory = TestData.packageRoot.appendingPathComponent(".build/pictures")

    static func save(_ name: String, _ text: String) {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }
}
