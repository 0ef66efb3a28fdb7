import FencepostGeometry
import Testing

@Suite struct SpatialIndexTests {
    /// A deterministic pseudo-random sequence, so failures reproduce.
    struct SplitMix {
        var state: UInt64
        mutating func next() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            return Double(z >> 11) / Double(1 << 53)
        }
    }

    @Test func queriesMatchABruteForceScan() throws {
        var random = SplitMix(state: 42)
        let envelopes = (0..<2000).map { _ -> Envelope in
            let x = random.next() * 100, y = random.next() * 100
            return Envelope(minX: x, minY: y, maxX: x + random.next() * 3, maxY: y + random.next() * 3)
        }
        let index = try SpatialIndex(envelopes: envelopes, context: GEOSContext())
        #expect(index.count == 2000)
        for _ in 0..<300 {
            let x = random.next() * 100, y = random.next() * 100
            let box = Envelope(minX: x, minY: y, maxX: x + random.next() * 5, maxY: y + random.next() * 5)
            let expected = envelopes.indices.filter { envelopes[$0].intersects(box) }
            #expect(try index.query(box) == expected)
            let pointHits = envelopes.indices.filter { envelopes[$0].contains(x: x, y: y) }
            #expect(try index.query(x: x, y: y) == pointHits)
        }
    }

    @Test func emptyIndexAnswersNothing() throws {
        let index = try SpatialIndex(envelopes: [], context: GEOSContext())
        #expect(try index.query(x: 0, y: 0).isEmpty)
    }
}
