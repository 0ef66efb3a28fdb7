import FencepostFuzzTargets
import FencepostTestSupport
import Foundation
import Testing

/// Every fuzz target's saved corpus and every crash the fuzzer found (each fixed, and kept as a
/// regression input) replayed through the ordinary build: none may crash, and each target's
/// corpus must hold inputs its parser accepts, so the replay reaches past the first refusal.
@Suite struct FuzzCorpusTests {
    static let root = TestData.packageRoot.appendingPathComponent("FuzzTesting")

    static func inputs(_ folder: String, _ target: String) -> [URL] {
        let directory = root.appendingPathComponent(folder).appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
    }

    @Test(arguments: FuzzTarget.all.map(\.name))
    func corpusReplays(target name: String) async throws {
        let target = try #require(FuzzTarget.named(name))
        let corpus = Self.inputs("Corpus", name)
        #expect(!corpus.isEmpty, "FuzzTesting/Corpus/\(name) holds no inputs")
        var accepted = 0
        for file in corpus {
            if case .accepted(let count) = await target.run([UInt8](try Data(contentsOf: file))), count > 0 {
                accepted += 1
            }
        }
        #expect(accepted > 0, "no input of FuzzTesting/Corpus/\(name) is accepted by its parser")
    }

    @Test(arguments: FuzzTarget.all.map(\.name))
    func crashesStayFixed(target name: String) async throws {
        let target = try #require(FuzzTarget.named(name))
        for file in Self.inputs("Crashes", name) {
            await target.run([UInt8](try Data(contentsOf: file)))
        }
    }

    @Test func targetNamesAreUnique() {
        let names = FuzzTarget.all.map(\.name)
        #expect(Set(names).count == names.count)
    }
}
