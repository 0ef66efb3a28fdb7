import FencepostCore
import Testing

/// Fingerprints are stored as 64 lower-case hex digits and read back from them.
@Suite struct SourceFingerprintTests {
    @Test func hexReadsBackToTheSameFingerprint() {
        for text in ["", "{}", #"{"type":"Feature"}"#, String(repeating: "x", count: 1_000)] {
            let fingerprint = RegionSource.fingerprint(ArraySlice(text.utf8))
            #expect(fingerprint.hex.count == 64)
            #expect(SourceFingerprint(hex: fingerprint.hex) == fingerprint)
        }
        let zeros = String(repeating: "0", count: 64)
        #expect(SourceFingerprint(hex: zeros)?.hex == zeros)
        let last = String(repeating: "f", count: 64)
        #expect(SourceFingerprint(hex: last)?.hex == last)
    }

    @Test func anythingButSixtyFourLowerCaseHexDigitsIsRefused() {
        let valid = RegionSource.fingerprint(ArraySlice("{}".utf8)).hex
        #expect(SourceFingerprint(hex: String(valid.dropLast())) == nil)
        #expect(SourceFingerprint(hex: valid + "0") == nil)
        #expect(SourceFingerprint(hex: valid.uppercased()) == nil || valid.uppercased() == valid)
        for bad in ["g", "G", "A", " ", "-", "\u{0}", "é"] {
            // One bad character in each of the four 16-digit words.
            for position in [0, 17, 40, 63] {
                var characters = Array(valid)
                characters[position] = Character(bad)
                #expect(SourceFingerprint(hex: String(characters)) == nil, "\(bad) at \(position)")
            }
        }
    }
}
