import CGEOS

// MARK: - Shape → GEOS

extension Geometry {
    /// Builds the GEOS geometry for a shape. Rings must already be closed with at least four
    /// positions; region validation checks that first and explains it better than GEOS would.
    public convenience init(shape: Shape, context: GEOSContext) throws {
        context.clearError()
        let pointer: OpaquePointer
        switch shape {
        case .point(let position):
            guard let point = GEOSGeom_createPointFromXY_r(context.handle, position.lon, position.lat) else {
                throw context.failure("create point")
            }
            pointer = point
        case .lineString(let positions):
            let sequence = try Self.makeSequence(positions, context: context)
            // The line takes ownership of the sequence, whether or not it succeeds.
            guard let line = GEOSGeom_createLineString_r(context.handle, sequence) else {
                throw context.failure("create line")
            }
            pointer = line
        case .polygon(let polygon):
            pointer = try Self.makePolygon(polygon, context: context)
        case .multiPolygon(let polygons):
            pointer = try Self.makeMultiPolygon(polygons, context: context)
        }
        self.init(adopting: pointer, context: context)
    }

    private static func makeRing(_ ring: [Position], context: GEOSContext) throws -> OpaquePointer {
        guard ring.count >= 4 else {
            throw GeometryError.malformedCoordinates("a ring needs at least 4 positions, got \(ring.count)")
        }
        guard ring.first == ring.last else {
            throw GeometryError.malformedCoordinates("ring is not closed")
        }
        let sequence = try makeSequence(ring, context: context)
        // The ring takes ownership of the sequence, whether or not it succeeds.
        guard let linearRing = GEOSGeom_createLinearRing_r(context.handle, sequence) else {
            throw context.failure("create linear ring")
        }
        return linearRing
    }

    private static func makeSequence(_ positions: [Position], context: GEOSContext) throws -> OpaquePointer {
        var buffer = [Double]()
        buffer.reserveCapacity(positions.count * 2)
        for position in positions {
            buffer.append(position.lon)
            buffer.append(position.lat)
        }
        guard let sequence = GEOSCoordSeq_copyFromBuffer_r(context.handle, buffer, UInt32(positions.count), 0, 0)
        else {
            throw context.failure("create coordinate sequence")
        }
        return sequence
    }

    private static func makePolygon(_ polygon: PolygonCoordinates, context: GEOSContext) throws -> OpaquePointer {
        guard !polygon.rings.isEmpty else {
            throw GeometryError.malformedCoordinates("a polygon needs an exterior ring")
        }
        var rings: [OpaquePointer] = []
        do {
            for ring in polygon.rings {
                rings.append(try makeRing(ring, context: context))
            }
        } catch {
            for ring in rings { GEOSGeom_destroy_r(context.handle, ring) }
            throw error
        }
        var holes: [OpaquePointer?] = rings.dropFirst().map { $0 }
        // The polygon takes ownership of the shell and the holes.
        let created = holes.withUnsafeMutableBufferPointer { buffer in
            GEOSGeom_createPolygon_r(context.handle, rings[0], buffer.baseAddress, UInt32(buffer.count))
        }
        guard let created else { throw context.failure("create polygon") }
        return created
    }

    private static func makeMultiPolygon(_ polygons: [PolygonCoordinates], context: GEOSContext) throws -> OpaquePointer
    {
        var parts: [OpaquePointer?] = []
        do {
            for polygon in polygons {
                parts.append(try makePolygon(polygon, context: context))
            }
        } catch {
            for part in parts { GEOSGeom_destroy_r(context.handle, part) }
            throw error
        }
        // The collection takes ownership of its parts.
        let created = parts.withUnsafeMutableBufferPointer { buffer in
            GEOSGeom_createCollection_r(
                context.handle, Int32(GEOS_MULTIPOLYGON.rawValue), buffer.baseAddress, UInt32(buffer.count))
        }
        guard let created else { throw context.failure("create multipolygon") }
        return created
    }
}

// MARK: - GEOS → Shape

extension Geometry {
    /// The plain-Swift form of this geometry: points, polygons and multipolygons.
    public func shape() throws -> Shape {
        let handle = context.handle
        let typeID = GEOSGeomTypeId_r(handle, pointer)
        switch typeID {
        case Int32(GEOS_POINT.rawValue):
            let positions = try Self.positions(of: pointer, context: context)
            guard let position = positions.first else {
                throw GeometryError.malformedCoordinates("empty point")
            }
            return .point(position)
        case Int32(GEOS_LINESTRING.rawValue):
            return .lineString(try Self.positions(of: pointer, context: context))
        case Int32(GEOS_POLYGON.rawValue):
            return .polygon(try Self.polygonCoordinates(of: pointer, context: context))
        case Int32(GEOS_MULTIPOLYGON.rawValue):
            let count = GEOSGetNumGeometries_r(handle, pointer)
            var polygons: [PolygonCoordinates] = []
            for index in 0..<max(count, 0) {
                guard let part = GEOSGetGeometryN_r(handle, pointer, index) else {
                    throw context.failure("multipolygon part")
                }
                polygons.append(try Self.polygonCoordinates(of: part, context: context))
            }
            return .multiPolygon(polygons)
        default:
            throw GeometryError.malformedCoordinates("unsupported geometry type \(typeName)")
        }
    }

    private static func polygonCoordinates(of polygon: OpaquePointer, context: GEOSContext) throws -> PolygonCoordinates
    {
        let handle = context.handle
        guard let shell = GEOSGetExteriorRing_r(handle, polygon) else {
            throw context.failure("exterior ring")
        }
        var rings = [try positions(of: shell, context: context)]
        let holeCount = GEOSGetNumInteriorRings_r(handle, polygon)
        for index in 0..<max(holeCount, 0) {
            guard let hole = GEOSGetInteriorRingN_r(handle, polygon, index) else {
                throw context.failure("interior ring")
            }
            rings.append(try positions(of: hole, context: context))
        }
        return PolygonCoordinates(rings: rings)
    }

    /// The positions of a point, a line or a linear ring; the pointer is borrowed, not owned.
    private static func positions(of geometry: OpaquePointer, context: GEOSContext) throws -> [Position] {
        let handle = context.handle
        guard let sequence = GEOSGeom_getCoordSeq_r(handle, geometry) else {
            throw context.failure("coordinate sequence")
        }
        var size: UInt32 = 0
        guard GEOSCoordSeq_getSize_r(handle, sequence, &size) == 1 else {
            throw context.failure("coordinate sequence size")
        }
        var buffer = [Double](repeating: 0, count: Int(size) * 2)
        guard GEOSCoordSeq_copyToBuffer_r(handle, sequence, &buffer, 0, 0) == 1 else {
            throw context.failure("copy coordinates")
        }
        return (0..<Int(size)).map { Position(lon: buffer[2 * $0], lat: buffer[2 * $0 + 1]) }
    }
}
