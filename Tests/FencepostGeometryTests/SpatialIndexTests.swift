import FencepostGeometry
import FencepostTestSupport
import Testing

@Suite struct SpatialIndexTests {
    /// 40,000 boxes are tiled across the cores, 2,000 on the calling thread.
    @Test(arguments: [2000, 40_000]) func queriesMatchABruteForceScan(count: Int) throws {
        var random = SplitMix64(seed: 42)
        let envelopes = (0..<count).map { _ -> Envelope in
            let x = random.unit() * 100
            let y = random.unit() * 100
            return Envelope(minX: x, minY: y, maxX: x + random.unit() * 3, maxY: y + random.unit() * 3)
        }
        let index = SpatialIndex(envelopes: envelopes)
        #expect(index.count == count)
        for _ in 0..<300 {
            let x = random.unit() * 100
            let y = random.unit() * 100
            let box = Envelope(minX: x, minY: y, maxX: x + random.unit() * 5, maxY: y + random.unit() * 5)
            let expected = envelopes.indices.filter { envelopes[$0].intersects(box) }
            #expect(index.query(box) == expected)
            let pointHits = envelopes.indices.filter { envelopes[$0].contains(x: x, y: y) }
            #expect(index.query(x: x, y: y) == pointHits)
        }
    }

    @Test func emptyIndexAnswersNothing() throws {
        let index = SpatialIndex(envelopes: [])
        #expect(index.query(x: 0, y: 0).isEmpty)
    }
}
