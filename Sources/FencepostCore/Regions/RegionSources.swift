import Crypto
public import FencepostGeometry

// MARK: - Recognising features by their source text

/// Where a stored region was last applied from: the fingerprint of its feature's text in a
/// config file. The same bytes read again make the same region (reading is a function of the
/// bytes), so a feature whose fingerprint the store holds is that stored region, unchanged:
/// neither parsed, validated nor hashed again. This is what makes re-planning a million
/// unchanged regions a matter of reading their bytes.
public enum RegionSource {
    /// Which reading of a feature's text a fingerprint stands for. The same bytes make the same
    /// region only while the reader does not change: bump this when a release reads a feature
    /// differently (a new property, say `privacy`), so that a store applied by the reader before
    /// reads every feature in full once, and takes up what the new reader makes of it.
    static let reader = Array("fencepost region reader 1\n".utf8)

    /// The SHA-256 of ``reader`` and a feature's bytes.
    public static func fingerprint(_ bytes: ArraySlice<UInt8>) -> SourceFingerprint {
        var sha = SHA256()
        sha.update(data: reader)
        sha.update(data: bytes)
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for (index, byte) in sha.finalize().enumerated() {
            let word = UInt64(byte) << (8 * UInt64(7 - index % 8))
            switch index / 8 {
            case 0: words.0 |= word
            case 1: words.1 |= word
            case 2: words.2 |= word
            default: words.3 |= word
            }
        }
        return SourceFingerprint(words)
    }
}

/// A SHA-256 held as four words: a million of them are a table's keys, compared and hashed
/// without a string each. Stored as its 64 hex digits.
public struct SourceFingerprint: Sendable, Hashable {
    private var words: (UInt64, UInt64, UInt64, UInt64)

    init(_ words: (UInt64, UInt64, UInt64, UInt64)) {
        self.words = words
    }

    /// From 64 lower-case hex digits; nil for anything else.
    public init?(hex: String) {
        var hex = hex
        let parsed = hex.withUTF8 { text -> (UInt64, UInt64, UInt64, UInt64)? in
            guard text.count == 64 else { return nil }
            func word(_ offset: Int) -> UInt64? {
                var word: UInt64 = 0
                var invalid: UInt8 = 0
                for byte in text[offset..<offset + 16] {
                    let digit = Self.digitValues[Int(byte)]
                    invalid |= digit
                    word = word << 4 | UInt64(digit & 0xF)
                }
                return invalid & 0x10 == 0 ? word : nil
            }
            guard let a = word(0), let b = word(16), let c = word(32), let d = word(48) else { return nil }
            return (a, b, c, d)
        }
        guard let parsed else { return nil }
        words = parsed
    }

    /// Each byte's value as a lower-case hex digit, or 0x10 for any other byte: a table, since
    /// a million fingerprints are read back at the start of every re-plan.
    private static let digitValues: [UInt8] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt8(byte) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt8(byte) - UInt8(ascii: "a") + 10
        default: return 0x10
        }
    }

    /// The 64 lower-case hex digits.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for word in [words.0, words.1, words.2, words.3] {
            for shift in stride(from: 60, through: 0, by: -4) {
                text.append(digits[Int((word >> UInt64(shift)) & 0xF)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2 && a.words.3 == b.words.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)  // already uniformly spread: one word is enough
    }
}

/// A feature recognised by its fingerprint as a stored region, unchanged since it was applied.
public struct RecognizedRegion: Sendable, Hashable {
    public var id: String
    public var fingerprint: SourceFingerprint
    /// The region's lon/lat box, as stored (for the outlier warnings).
    public var bounds: Envelope

    public init(id: String, fingerprint: SourceFingerprint, bounds: Envelope) {
        self.id = id
        self.fingerprint = fingerprint
        self.bounds = bounds
    }
}

/// The stored regions by the fingerprint they were applied from: what a config reader
/// recognises features by. Empty: every feature is read.
public struct RegionSourceIndex: Sendable {
    public private(set) var regions: [SourceFingerprint: RecognizedRegion] = [:]

    public init() {}

    public init(capacity: Int) {
        regions.reserveCapacity(capacity)
    }

    /// Adds a stored region; of two with the same fingerprint (two ids applied from the same
    /// text cannot both be stored), the first is kept.
    public mutating func add(_ region: RecognizedRegion) {
        // One probe of the table: a mutable access through `default` stores the region only
        // where the fingerprint is missing (a million of these start every re-plan).
        Self.keep(&regions[region.fingerprint, default: region])
    }

    private static func keep(_: inout RecognizedRegion) {}
}

/// A config's regions as a plan reads them: those read from their features, each with the
/// fingerprint of its text (nil when it was not taken), and those recognised as stored and
/// unchanged. Both sorted by id; no id twice across the two.
public struct DesiredRegions: Sendable {
    public var regions: [Region]
    /// Aligned with `regions`.
    public var sources: [SourceFingerprint?]
    public var recognized: [RecognizedRegion]

    public init(regions: [Region], sources: [SourceFingerprint?]? = nil, recognized: [RecognizedRegion] = []) {
        self.regions = regions
        self.sources = sources ?? Array(repeating: nil, count: regions.count)
        self.recognized = recognized
    }

    /// Every region's id and box, in id order: what the outlier warnings look at.
    public var boxes: [(id: String, bounds: Envelope)] {
        var boxes: [(id: String, bounds: Envelope)] = []
        boxes.reserveCapacity(regions.count + recognized.count)
        var next = 0
        for region in regions {
            while next < recognized.count, recognized[next].id < region.id {
                boxes.append((recognized[next].id, recognized[next].bounds))
                next += 1
            }
            boxes.append((region.id, region.shape.bounds))
        }
        for rest in recognized[next...] { boxes.append((rest.id, rest.bounds)) }
        return boxes
    }
}

extension RegionConfig {
    /// The files' regions and recognised features as one desired set; nil when some file has
    /// a problem or some id is used twice (reading the files again without recognising
    /// anything then says exactly what, as ``merge(_:)`` does).
    public static func desired(_ files: [RegionFile]) -> DesiredRegions? {
        guard files.allSatisfy(\.issues.isEmpty) else { return nil }
        var regions: [Region] = []
        var sources: [SourceFingerprint?] = []
        var recognized: [RecognizedRegion] = []
        for file in files {
            regions.append(contentsOf: file.regions.lazy.map(\.region))
            sources.append(
                contentsOf: file.sources.count == file.regions.count
                    ? file.sources : Array(repeating: nil, count: file.regions.count))
            recognized.append(contentsOf: file.recognized.lazy.map(\.region))
        }
        var order = Array(regions.indices)
        order.sort { regions[$0].id < regions[$1].id }
        recognized.sort { $0.id < $1.id }
        for (a, b) in zip(order, order.dropFirst()) where regions[a].id == regions[b].id { return nil }
        for (a, b) in zip(recognized, recognized.dropFirst()) where a.id == b.id { return nil }
        // An id both read and recognised: walk the two sorted lists together.
        var next = 0
        for index in order {
            let id = regions[index].id
            while next < recognized.count, recognized[next].id < id { next += 1 }
            if next < recognized.count, recognized[next].id == id { return nil }
        }
        return DesiredRegions(
            regions: order.map { regions[$0] }, sources: order.map { sources[$0] }, recognized: recognized)
    }
}
