import CGEOS

// MARK: - WKT

extension Geometry {
    /// Parses well-known text, such as `POLYGON ((0 0, 1 0, 1 1, 0 0))`.
    public convenience init(wkt: String, context: GEOSContext) throws {
        context.clearError()
        guard let reader = GEOSWKTReader_create_r(context.handle) else { throw context.failure("WKT reader") }
        defer { GEOSWKTReader_destroy_r(context.handle, reader) }
        guard let pointer = GEOSWKTReader_read_r(context.handle, reader, wkt) else {
            throw context.failure("WKT read")
        }
        self.init(adopting: pointer, context: context)
    }

    /// The geometry as well-known text, with trailing zeros trimmed.
    public func wkt() throws -> String {
        context.clearError()
        guard let writer = GEOSWKTWriter_create_r(context.handle) else { throw context.failure("WKT writer") }
        defer { GEOSWKTWriter_destroy_r(context.handle, writer) }
        GEOSWKTWriter_setTrim_r(context.handle, writer, 1)
        guard let text = context.takeString(GEOSWKTWriter_write_r(context.handle, writer, pointer)) else {
            throw context.failure("WKT write")
        }
        return text
    }
}

// MARK: - GeoJSON geometry

extension Geometry {
    /// Parses a GeoJSON geometry object, such as `{"type":"Point","coordinates":[8.5,47.4]}`.
    public convenience init(geoJSON: String, context: GEOSContext) throws {
        context.clearError()
        guard let reader = GEOSGeoJSONReader_create_r(context.handle) else {
            throw context.failure("GeoJSON reader")
        }
        defer { GEOSGeoJSONReader_destroy_r(context.handle, reader) }
        guard let pointer = GEOSGeoJSONReader_readGeometry_r(context.handle, reader, geoJSON) else {
            throw context.failure("GeoJSON read")
        }
        self.init(adopting: pointer, context: context)
    }

    /// The geometry as a compact GeoJSON geometry object.
    public func geoJSON() throws -> String {
        context.clearError()
        guard let writer = GEOSGeoJSONWriter_create_r(context.handle) else {
            throw context.failure("GeoJSON writer")
        }
        defer { GEOSGeoJSONWriter_destroy_r(context.handle, writer) }
        guard let text = context.takeString(GEOSGeoJSONWriter_writeGeometry_r(context.handle, writer, pointer, -1))
        else {
            throw context.failure("GeoJSON write")
        }
        return text
    }
}
