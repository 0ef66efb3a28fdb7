import Foundation

/// Which source wins where several recorded the same minutes: the first pattern a source's name
/// contains (case and odd spaces aside) ranks it; unmatched sources come after, by name.
package struct SourcePriority: Sendable, Hashable {
    package let patterns: [String]

    /// The Watch before the iPhone: the Watch is on the wrist, the phone is often on a desk.
    package static let standard = SourcePriority(patterns: ["Apple Watch", "iPhone"])

    package init(patterns: [String]) {
        self.patterns = patterns.map(Self.normalized).filter { !$0.isEmpty }
    }

    /// The sources in priority order, best first.
    func ordered(_ sources: [String]) -> [String] {
        sources.sorted { a, b in
            let ra = rank(a)
            let rb = rank(b)
            return ra != rb ? ra < rb : a < b
        }
    }

    private func rank(_ source: String) -> Int {
        let name = Self.normalized(source)
        return patterns.firstIndex { name.contains($0) } ?? patterns.count
    }

    /// Lowercased, with no-break and other unusual spaces made plain.
    private static func normalized(_ text: String) -> String {
        String(text.lowercased().map { $0.isWhitespace ? " " : $0 }).trimmingCharacters(in: .whitespaces)
    }
}
