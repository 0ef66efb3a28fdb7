public import FencepostGeometry

/// The area within `buffer` metres of a line: a route, a rail line, a pipeline.
///
/// Monitored as its outline, a polygon in lon/lat worked out once: GEOS buffers the line in
/// local metres, piece by piece (each at most ``pieceLength`` long, in a projection centred on
/// it, so a long line keeps its width wherever it runs), round at the ends and the bends, and the
/// pieces' areas are joined. The arcs are polygons of 16 segments a quarter circle: the outline
/// lies within 0.13 % of the buffer inside the exact one.
public struct Corridor: Sendable, Hashable {
    /// The centre line, planar in lon/lat between its positions, as polygons' edges are.
    public let line: [Position]
    /// Metres either side of the line.
    public let buffer: Double
    /// The area, a polygon (or, rarely, a multipolygon) in lon/lat.
    public let outline: Shape

    /// The longest piece of the line buffered in one local projection, in metres.
    public static let pieceLength = 10_000.0

    public init(line: [Position], buffer: Double, context: GEOSContext) throws {
        self.line = line
        self.buffer = buffer
        var area: Geometry?
        for piece in Self.pieces(of: line) {
            let projection = LocalProjection(centredOn: Envelope(covering: piece))
            let buffered = try Geometry(shape: projection.project(.lineString(piece)), context: context).buffer(buffer)
            let outline = try Geometry(shape: projection.unproject(buffered.shape()), context: context)
            area = try area.map { try $0.union(with: outline) } ?? outline
        }
        guard let area else { throw GeometryError.malformedCoordinates("a corridor needs a line of two positions") }
        self.outline = try area.shape()
    }

    /// The line cut into runs at most ``pieceLength`` long (a longer segment cut in equal
    /// parts), each run starting where the last ended.
    static func pieces(of line: [Position]) -> [[Position]] {
        var pieces: [[Position]] = []
        var current: [Position] = []
        var length = 0.0
        for (a, b) in zip(line, line.dropFirst()) {
            let segment = Geodesy.distance(a, b)
            let parts = max(Int((segment / pieceLength).rounded(.up)), 1)
            for part in 1...parts {
                let fraction = Double(part) / Double(parts)
                let point = Position(lon: a.lon + (b.lon - a.lon) * fraction, lat: a.lat + (b.lat - a.lat) * fraction)
                if current.isEmpty { current = [a] }
                current.append(point)
                length += segment / Double(parts)
                if length >= pieceLength * 0.999 {
                    pieces.append(current)
                    current = [point]
                    length = 0
                }
            }
        }
        if current.count > 1 { pieces.append(current) }
        return pieces
    }

    public static func == (a: Corridor, b: Corridor) -> Bool {
        a.line == b.line && a.buffer == b.buffer
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(line)
        hasher.combine(buffer)
    }
}
