import CGEOS

/// A GEOS STRtree over envelopes, answering "which items' boxes touch this box".
///
/// Items are identified by their position in the array the index was built from, so callers
/// keep their own array of regions and get indices back. The tree is built once and queried
/// many times; it cannot grow after construction.
public final class SpatialIndex {
    public let context: GEOSContext
    private let tree: OpaquePointer
    /// The envelope geometries inserted: kept alive for the tree's lifetime, since GEOS
    /// releases before 3.10 referenced, rather than copied, an inserted geometry's envelope.
    private var boxes: [OpaquePointer] = []
    public let count: Int

    /// Builds the index over `envelopes`; item `i` is `envelopes[i]`.
    public init(envelopes: [Envelope], context: GEOSContext) throws {
        self.context = context
        context.clearError()
        guard let tree = GEOSSTRtree_create_r(context.handle, 10) else { throw context.failure("STRtree create") }
        self.tree = tree
        self.count = envelopes.count
        for (index, envelope) in envelopes.enumerated() {
            guard let box = GEOSGeom_createRectangle_r(
                context.handle, envelope.minX, envelope.minY, envelope.maxX, envelope.maxY)
            else {
                throw context.failure("envelope rectangle")  // deinit releases what was made
            }
            boxes.append(box)
            GEOSSTRtree_insert_r(context.handle, tree, box, UnsafeMutableRawPointer(bitPattern: index + 1))
        }
        guard fp_strtree_build(context.handle, tree) == 1 else { throw context.failure("STRtree build") }
    }

    deinit {
        GEOSSTRtree_destroy_r(context.handle, tree)
        for box in boxes { GEOSGeom_destroy_r(context.handle, box) }
    }

    /// Indices of the items whose envelopes intersect `envelope`, in ascending order.
    public func query(_ envelope: Envelope) throws -> [Int] {
        context.clearError()
        guard let probe = GEOSGeom_createRectangle_r(
            context.handle, envelope.minX, envelope.minY, envelope.maxX, envelope.maxY)
        else {
            throw context.failure("query rectangle")
        }
        defer { GEOSGeom_destroy_r(context.handle, probe) }
        let hits = HitList()
        let userdata = Unmanaged.passUnretained(hits).toOpaque()
        withExtendedLifetime(hits) {
            GEOSSTRtree_query_r(context.handle, tree, probe, { item, userdata in
                guard let item, let userdata else { return }
                Unmanaged<HitList>.fromOpaque(userdata).takeUnretainedValue().indices.append(Int(bitPattern: item) - 1)
            }, userdata)
        }
        return hits.indices.sorted()
    }

    /// Indices of the items whose envelopes contain the point (x, y).
    public func query(x: Double, y: Double) throws -> [Int] {
        try query(Envelope(minX: x, minY: y, maxX: x, maxY: y))
    }
}

/// Collects the items a query callback reports; lives only for the duration of one query.
private final class HitList {
    var indices: [Int] = []
}
