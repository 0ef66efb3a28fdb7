import Testing

@testable import FencepostIngest

/// The spool scan keeps events and visits in: key order whether records stay in memory or
/// spill to runs, a refused input's records left out, the first of equal keys kept.
@Suite struct SortedSpoolTests {
    @Test(arguments: [1_000, 7, 1])
    func drainsInKeyOrderAcrossSpilledRuns(limit: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let spool = SortedSpool(limit: limit)
        var expected: [SortedSpool.Record] = []
        for index in 0..<500 {
            let record = SortedSpool.Record(
                milliseconds: Int64.random(in: 0..<100, using: &generator),
                id: "id-\(Int.random(in: 0..<50, using: &generator))",
                input: index % 5, text: "line \(index) with a \"quote\"\nand a break\n")
            try spool.add(record)
            expected.append(record)
        }
        spool.discard(input: 3)
        // What a store would list: by key, the first row of each key, input 3 refused.
        var seen = Set<String>()
        let wanted = expected.enumerated()
            .filter { $0.element.input != 3 }
            .sorted {
                ($0.element.milliseconds, $0.element.id, $0.offset) < (
                    $1.element.milliseconds, $1.element.id, $1.offset
                )
            }
            .filter { seen.insert("\($0.element.milliseconds) \($0.element.id)").inserted }
            .map(\.element.text)
        var drained: [String] = []
        try spool.drain { drained.append($0) }
        #expect(drained == wanted)
        try spool.drain { _ in Issue.record("a drained spool is empty") }
    }
}
