import CGEOS

/// A prepared geometry: GEOS's indexed form, built once and reused for many point tests.
public final class PreparedGeometry {
    public let geometry: Geometry
    let pointer: OpaquePointer

    init(geometry: Geometry) throws {
        let context = geometry.context
        context.clearError()
        guard let pointer = GEOSPrepare_r(context.handle, geometry.pointer) else {
            throw context.failure("prepare")
        }
        self.geometry = geometry
        self.pointer = pointer
    }

    deinit {
        GEOSPreparedGeom_destroy_r(geometry.context.handle, pointer)
    }

    /// Whether the geometry covers the point (x, y): interior or boundary.
    ///
    /// For a polygon, "intersects a point" and "covers a point" are the same test; GEOS 3.12
    /// answers it from the coordinates directly, older GEOS through a temporary point (the shim).
    public func covers(x: Double, y: Double) throws -> Bool {
        switch fp_prepared_intersects_xy(geometry.context.handle, pointer, x, y) {
        case 1: return true
        case 0: return false
        default: throw geometry.context.failure("prepared covers")
        }
    }

    /// The planar distance from the point (x, y) to the geometry; 0 when the geometry covers it.
    public func distance(x: Double, y: Double) throws -> Double {
        let context = geometry.context
        guard let point = GEOSGeom_createPointFromXY_r(context.handle, x, y) else {
            throw context.failure("create point")
        }
        defer { GEOSGeom_destroy_r(context.handle, point) }
        var distance = 0.0
        guard GEOSPreparedDistance_r(context.handle, pointer, point, &distance) == 1 else {
            throw context.failure("prepared distance")
        }
        return distance
    }

    /// Whether the straight segment from (x1, y1) to (x2, y2) touches the geometry.
    public func intersectsSegment(x1: Double, y1: Double, x2: Double, y2: Double) throws -> Bool {
        let context = geometry.context
        let coordinates = [x1, y1, x2, y2]
        guard let sequence = GEOSCoordSeq_copyFromBuffer_r(context.handle, coordinates, 2, 0, 0) else {
            throw context.failure("create coordinate sequence")
        }
        // The line takes ownership of the sequence.
        guard let line = GEOSGeom_createLineString_r(context.handle, sequence) else {
            throw context.failure("create line")
        }
        defer { GEOSGeom_destroy_r(context.handle, line) }
        switch GEOSPreparedIntersects_r(context.handle, pointer, line) {
        case 1: return true
        case 0: return false
        default: throw context.failure("prepared intersects")
        }
    }
}
