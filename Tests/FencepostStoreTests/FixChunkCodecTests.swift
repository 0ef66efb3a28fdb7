import FencepostCore
import FencepostStore
import FencepostTestSupport
import Testing

/// The stored fixes' encoding (``FixChunkCodec``): what goes in comes out, to the stored
/// precision, whether written at once or appended a fix at a time.
@Suite struct FixChunkCodecTests {
    /// Random fixes in time order: jumps of any size, negative coordinates, optional fields.
    func fixes(seed: UInt64, count: Int) -> [Fix] {
        var random = SplitMix64(seed: seed)
        var time = 1_550_000_000.0 + random.unit() * 1e8
        return (0..<count).map { index in
            time += index % 7 == 0 ? random.unit() * 86_400 : 0.001 + random.unit() * 5
            return Fix(
                device: "d", time: time, lat: random.unit() * 180 - 90, lon: random.unit() * 360 - 180,
                accuracy: random.unit() < 0.8 ? random.unit() * 300 : nil,
                altitude: random.unit() < 0.5 ? random.unit() * 9_000 - 500 : nil,
                speed: random.unit() < 0.5 ? random.unit() * 90 : nil)
        }
    }

    func decoded(_ bytes: [UInt8]) throws -> [Fix] {
        var decoder = FixChunkCodec.Decoder(bytes)
        var result: [Fix] = []
        while let fix = try decoder.next(device: "d") { result.append(fix) }
        return result
    }

    func close(_ a: Double?, _ b: Double?, _ step: Double) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let a?, let b?): return abs(a - b) <= step / 2 + 1e-9
        default: return false
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64]) func roundTripAtTheStoredPrecision(seed: UInt64) throws {
        let input = fixes(seed: seed, count: 2_000)
        var encoder = FixChunkCodec.Encoder()
        for fix in input { encoder.append(fix) }
        let output = try decoded(encoder.bytes)
        #expect(output.count == input.count)
        for (a, b) in zip(input, output) {
            #expect(Timestamp.milliseconds(a.time) == Timestamp.milliseconds(b.time))
            #expect(close(a.lat, b.lat, 1e-7) && close(a.lon, b.lon, 1e-7))
            #expect(close(a.accuracy, b.accuracy, 0.1) && close(a.altitude, b.altitude, 0.1))
            #expect(close(a.speed, b.speed, 0.01))
        }
    }

    @Test func appendingContinuesTheSameBytes() throws {
        let input = fixes(seed: 9, count: 300)
        var whole = FixChunkCodec.Encoder()
        for fix in input { whole.append(fix) }
        var bytes: [UInt8] = []
        for fix in input {
            var decoder = FixChunkCodec.Decoder(bytes)
            var encoder = FixChunkCodec.Encoder(continuing: bytes, state: try decoder.skipToEnd())
            encoder.append(fix)
            bytes = encoder.bytes
        }
        #expect(bytes == whole.bytes)
    }

    @Test func aWalkOneFixASecondTakesAFewBytesAFix() {
        var encoder = FixChunkCodec.Encoder()
        for second in 0..<3_600 {
            let t = Double(second)
            encoder.append(
                Fix(device: "d", time: 1_700_000_000 + t, lat: 52.66 + t * 1.3e-5, lon: -8.62 + t * 0.9e-5, accuracy: 5)
            )
        }
        // Time, two coordinates and the accuracy, each a small delta: no more than 8 bytes.
        #expect(encoder.bytes.count <= 3_600 * 8)
    }

    @Test func bytesCutInsideAFixAreRefused() {
        var encoder = FixChunkCodec.Encoder()
        encoder.append(Fix(device: "d", time: 1_700_000_000, lat: 1, lon: 2, accuracy: 3))
        #expect(throws: FixChunkCodec.CorruptChunk.self) { try decoded(Array(encoder.bytes.dropLast())) }
    }
}
