import FencepostGeometry
import Testing

@Suite struct GeometryTests {
    let context = GEOSContext()

    static let square = Shape.polygon(
        PolygonCoordinates(rings: [
            [
                Position(lon: 0, lat: 0), Position(lon: 2, lat: 0), Position(lon: 2, lat: 2),
                Position(lon: 0, lat: 2), Position(lon: 0, lat: 0),
            ]
        ]))

    @Test func shapeRoundTripsThroughGEOS() throws {
        let donut = Shape.polygon(
            PolygonCoordinates(rings: [
                [
                    Position(lon: 0, lat: 0), Position(lon: 10, lat: 0), Position(lon: 10, lat: 10),
                    Position(lon: 0, lat: 10), Position(lon: 0, lat: 0),
                ],
                [
                    Position(lon: 4, lat: 4), Position(lon: 4, lat: 6), Position(lon: 6, lat: 6),
                    Position(lon: 6, lat: 4), Position(lon: 4, lat: 4),
                ],
            ]))
        let multi = Shape.multiPolygon([
            PolygonCoordinates(rings: [
                [
                    Position(lon: 0, lat: 0), Position(lon: 1, lat: 0), Position(lon: 1, lat: 1),
                    Position(lon: 0, lat: 0),
                ]
            ]),
            PolygonCoordinates(rings: [
                [
                    Position(lon: 5, lat: 5), Position(lon: 6, lat: 5), Position(lon: 6, lat: 6),
                    Position(lon: 5, lat: 5),
                ]
            ]),
        ])
        for shape in [Self.square, donut, multi, .point(Position(lon: 8.5, lat: 47.4))] {
            #expect(try Geometry(shape: shape, context: context).shape() == shape)
        }
        #expect(try Geometry(shape: donut, context: context).area() == 96)
    }

    @Test func wktAndGeoJSONInAndOut() throws {
        let fromWKT = try Geometry(wkt: "POLYGON ((0 0, 2 0, 2 2, 0 2, 0 0))", context: context)
        #expect(try fromWKT.shape() == Self.square)
        #expect(try fromWKT.wkt() == "POLYGON ((0 0, 2 0, 2 2, 0 2, 0 0))")
        let fromGeoJSON = try Geometry(geoJSON: try fromWKT.geoJSON(), context: context)
        #expect(try fromGeoJSON.shape() == Self.square)
        #expect(fromGeoJSON.typeName == "Polygon")
    }

    @Test func unreadableTextReportsGEOSReason() {
        #expect(throws: GeometryError.self) { try Geometry(wkt: "POLYGON ((0 0, 1 1", context: context) }
        #expect(throws: GeometryError.self) { try Geometry(geoJSON: #"{"type":"Polygon"}"#, context: context) }
    }

    @Test func validityReportsReasonAndLocation() throws {
        let bowtie = try Geometry(wkt: "POLYGON ((0 0, 2 2, 2 0, 0 2, 0 0))", context: context)
        let problem = try #require(try bowtie.validityProblem())
        #expect(problem.reason.contains("Self-intersection"))
        #expect(problem.location == Position(lon: 1, lat: 1))
        #expect(try Geometry(shape: Self.square, context: context).validityProblem() == nil)
    }

    @Test func malformedRingsAreRefusedBeforeGEOS() {
        let open = Shape.polygon(
            PolygonCoordinates(rings: [
                [
                    Position(lon: 0, lat: 0), Position(lon: 1, lat: 0), Position(lon: 1, lat: 1),
                    Position(lon: 0, lat: 1),
                ]
            ]))
        #expect(throws: GeometryError.malformedCoordinates("ring is not closed")) {
            try Geometry(shape: open, context: context)
        }
    }

    @Test(arguments: [
        (1.0, 1.0, true),  // inside
        (2.0, 1.0, true),  // on an edge: boundary counts as inside
        (2.0, 2.0, true),  // on a vertex
        (2.000001, 1.0, false),
        (-1.0, 1.0, false),
    ])
    func preparedCoversCountsTheBoundary(x: Double, y: Double, expected: Bool) throws {
        let prepared = try Geometry(shape: Self.square, context: context).prepared()
        #expect(try prepared.covers(x: x, y: y) == expected)
    }

    @Test func distanceBetweenGeometries() throws {
        let square = try Geometry(shape: Self.square, context: context)
        let point = try Geometry(shape: .point(Position(lon: 5, lat: 1)), context: context)
        #expect(try square.distance(to: point) == 3)
        #expect(try square.envelope() == Envelope(minX: 0, minY: 0, maxX: 2, maxY: 2))
    }
}
