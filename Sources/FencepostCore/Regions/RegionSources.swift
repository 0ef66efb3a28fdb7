import Crypto
public import FencepostGeometry

// MARK: - Recognising features by their source text

/// Where a stored region was last applied from: the fingerprint of its feature's text in a
/// config file. The same bytes read again make the same region (reading is a function of the
/// bytes), so a feature whose fingerprint the store holds is that stored region, unchanged:
/// neither parsed, validated nor hashed again. This is what makes re-planning a million
/// unchanged regions a matter of reading their bytes.
public enum RegionSource {
    /// The SHA-256 of a feature's bytes, in hex.
    public static func fingerprint(_ bytes: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: bytes) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}

/// A feature recognised by its fingerprint as a stored region, unchanged since it was applied.
public struct RecognizedRegion: Sendable, Hashable {
    public var id: String
    public var fingerprint: String
    /// The region's lon/lat box, as stored (for the outlier warnings).
    public var bounds: Envelope

    public init(id: String, fingerprint: String, bounds: Envelope) {
        self.id = id
        self.fingerprint = fingerprint
        self.bounds = bounds
    }
}

/// The stored regions by the fingerprint they were applied from: what a config reader
/// recognises features by. Empty: every feature is read.
public struct RegionSourceIndex: Sendable {
    public var regions: [String: RecognizedRegion]

    public init(_ regions: [RecognizedRegion] = []) {
        self.regions = Dictionary(regions.map { ($0.fingerprint, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

/// A config's regions as a plan reads them: those read from their features, each with the
/// fingerprint of its text (nil when it was not taken), and those recognised as stored and
/// unchanged. Both sorted by id; no id twice across the two.
public struct DesiredRegions: Sendable {
    public var regions: [Region]
    /// Aligned with `regions`.
    public var sources: [String?]
    public var recognized: [RecognizedRegion]

    public init(regions: [Region], sources: [String?]? = nil, recognized: [RecognizedRegion] = []) {
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
        var sources: [String?] = []
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
