import CGEOS

/// A GEOS geometry this process owns: created by a throwing initializer, destroyed in `deinit`.
///
/// The geometry keeps its context alive; neither may cross threads (see ``GEOSContext``).
public final class Geometry {
    public let context: GEOSContext
    let pointer: OpaquePointer

    /// Adopts a geometry GEOS returned; the caller hands over ownership.
    init(adopting pointer: OpaquePointer, context: GEOSContext) {
        self.pointer = pointer
        self.context = context
    }

    deinit {
        GEOSGeom_destroy_r(context.handle, pointer)
    }

    /// The GEOS geometry type name, such as `Polygon`.
    public var typeName: String {
        context.takeString(GEOSGeomType_r(context.handle, pointer)) ?? "Unknown"
    }

    /// The geometry's bounding box.
    public func envelope() throws -> Envelope {
        var minX = 0.0
        var minY = 0.0
        var maxX = 0.0
        var maxY = 0.0
        guard GEOSGeom_getExtent_r(context.handle, pointer, &minX, &minY, &maxX, &maxY) == 1 else {
            throw context.failure("extent")
        }
        return Envelope(minX: minX, minY: minY, maxX: maxX, maxY: maxY)
    }

    /// The planar area in the units of the coordinates.
    public func area() throws -> Double {
        var area = 0.0
        guard GEOSArea_r(context.handle, pointer, &area) == 1 else { throw context.failure("area") }
        return area
    }

    /// The planar distance to another geometry made on the same context.
    public func distance(to other: Geometry) throws -> Double {
        precondition(other.context === context, "geometries from different GEOS contexts")
        var distance = 0.0
        guard GEOSDistance_r(context.handle, pointer, other.pointer, &distance) == 1 else {
            throw context.failure("distance")
        }
        return distance
    }

    /// A prepared form of this geometry, for many fast predicate tests against it.
    public func prepared() throws -> PreparedGeometry {
        try PreparedGeometry(geometry: self)
    }
}

// MARK: - Validity

/// Why GEOS considers a geometry invalid, and where.
public struct ValidityProblem: Sendable, Equatable, CustomStringConvertible {
    /// GEOS's reason, such as `Self-intersection` or `Ring Self-intersection`.
    public var reason: String
    /// The location GEOS reports, when it reports one.
    public var location: Position?

    public var description: String {
        guard let location else { return reason }
        return "\(reason) at [\(location.lon), \(location.lat)]"
    }
}

extension Geometry {
    /// Nil when the geometry is valid; otherwise GEOS's reason and location.
    public func validityProblem() throws -> ValidityProblem? {
        var reason: UnsafeMutablePointer<CChar>?
        var location: OpaquePointer?
        context.clearError()
        let result = GEOSisValidDetail_r(context.handle, pointer, 0, &reason, &location)
        switch result {
        case 1:
            return nil
        case 0:
            let text = context.takeString(reason) ?? "invalid geometry"
            var position: Position?
            if let location {
                let point = Geometry(adopting: location, context: context)
                if case .point(let p) = try point.shape() { position = p }
            }
            return ValidityProblem(reason: text, location: position)
        default:
            throw context.failure("validity check")
        }
    }
}

// MARK: - Derived geometries

extension Geometry {
    /// The boundary: the rings of a polygon as (multi)linestrings.
    public func boundary() throws -> Geometry {
        context.clearError()
        guard let pointer = GEOSBoundary_r(context.handle, pointer) else { throw context.failure("boundary") }
        return Geometry(adopting: pointer, context: context)
    }

    /// The area within `width` of the geometry (planar), round at the ends and the joins, arcs
    /// drawn with `quadrantSegments` segments a quarter circle.
    public func buffer(_ width: Double, quadrantSegments: Int32 = 16) throws -> Geometry {
        context.clearError()
        guard let pointer = GEOSBuffer_r(context.handle, pointer, width, quadrantSegments) else {
            throw context.failure("buffer")
        }
        return Geometry(adopting: pointer, context: context)
    }

    /// The planar union with another geometry made on the same context.
    public func union(with other: Geometry) throws -> Geometry {
        precondition(other.context === context, "geometries from different GEOS contexts")
        context.clearError()
        guard let pointer = GEOSUnion_r(context.handle, pointer, other.pointer) else { throw context.failure("union") }
        return Geometry(adopting: pointer, context: context)
    }

    /// The planar intersection with another geometry made on the same context.
    public func intersection(with other: Geometry) throws -> Geometry {
        precondition(other.context === context, "geometries from different GEOS contexts")
        context.clearError()
        guard let pointer = GEOSIntersection_r(context.handle, pointer, other.pointer) else {
            throw context.failure("intersection")
        }
        return Geometry(adopting: pointer, context: context)
    }
}
