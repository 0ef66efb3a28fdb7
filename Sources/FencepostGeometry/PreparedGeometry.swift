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
}
