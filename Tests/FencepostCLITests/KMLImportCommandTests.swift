import FencepostTestSupport
import Foundation
import Testing

/// `regions import` of KML and KMZ, as Google My Maps exports them: a Document with folders of
/// placemarks (written by hand from the format).
@Suite struct KMLImportCommandTests {
    static let kml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <kml xmlns="http://www.opengis.net/kml/2.2">
          <Document>
            <name>Deliveries</name>
            <Folder>
              <name>Depots</name>
              <Placemark id="depot-north">
                <name>North depot</name>
                <description><![CDATA[Gate code at the office]]></description>
                <Point><coordinates>-8.6254,52.6634,0</coordinates></Point>
              </Placemark>
              <Placemark>
                <name>Yard &amp; sheds</name>
                <Polygon>
                  <outerBoundaryIs><LinearRing><coordinates>
                    -8.630,52.660,0 -8.620,52.660,0 -8.620,52.665,0 -8.630,52.665,0 -8.630,52.660,0
                  </coordinates></LinearRing></outerBoundaryIs>
                  <innerBoundaryIs><LinearRing><coordinates>
                    -8.627,52.661 -8.623,52.661 -8.623,52.663 -8.627,52.663 -8.627,52.661
                  </coordinates></LinearRing></innerBoundaryIs>
                </Polygon>
              </Placemark>
            </Folder>
            <Folder>
              <name>Routes</name>
              <Placemark><name>Morning run</name><LineString><coordinates>-8.63,52.66 -8.62,52.67</coordinates></LineString></Placemark>
            </Folder>
          </Document>
        </kml>

        """

    static let expected =
        #"{"features":[{"geometry":{"coordinates":[-8.6254,52.6634],"type":"Point"},"properties":{"description":"Gate code at the office","id":"North-depot","name":"North depot","radius":80,"tags":["Depots"]},"type":"Feature"},"#
        + #"{"geometry":{"coordinates":[[[-8.63,52.66],[-8.62,52.66],[-8.62,52.665],[-8.63,52.665],[-8.63,52.66]],[[-8.627,52.661],[-8.623,52.661],[-8.623,52.663],[-8.627,52.663],[-8.627,52.661]]],"type":"Polygon"},"properties":{"id":"Yard-sheds","name":"Yard & sheds","tags":["Depots"]},"type":"Feature"}],"type":"FeatureCollection"}"#
        + "\n"

    @Test func kmlPlacemarksBecomeRegionsWithTheirFoldersAsTagsAndLinesSkipped() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let file = try cli.write("places.kml", Self.kml)
        let imported = try await cli.run("regions", "import", file, "--radius", "80", "--id-property", "name")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout == Self.expected)
        #expect(imported.stderr.contains("warning: \(file): skipped 1 placemark: line (a route, not an area)"))
        // What it prints is a region config: applied, the two regions are monitored.
        let config = try cli.write("regions/places.geojson", imported.stdout)
        let apply = try await cli.run("regions", "apply", config)
        #expect(apply.status == 0 && apply.stdout.hasSuffix("2 to add, 0 to update, 0 to remove, 0 unchanged\n"))

        // The same document zipped as KMZ (doc.kml, by Python's zipfile): the same config.
        let kmz = cli.path("places.kmz")
        let zip = Process()
        zip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        zip.arguments = [
            "python3", "-c",
            "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as z: z.write(sys.argv[1], 'doc.kml')",
            file, kmz,
        ]
        try zip.run()
        zip.waitUntilExit()
        #expect(zip.terminationStatus == 0)
        let fromKMZ = try await cli.run("regions", "import", kmz, "--radius", "80", "--id-property", "name")
        #expect(fromKMZ.status == 0 && fromKMZ.stdout == Self.expected)
    }

    @Test func aMalformedKMLIsRefusedWithItsLine() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let bad = try cli.write(
            "bad.kml", "<kml>\n<Placemark>\n<Point><coordinates>abc</coordinates></Point>\n</Placemark>\n</kml>\n")
        let refused = try await cli.run("regions", "import", bad)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("bad.kml:3: coordinates must be lon,lat[,alt]; found \"abc\""))
        // A point without a radius is the config's refusal, with the option that gives one.
        let point = try cli.write(
            "point.kml",
            "<kml><Placemark><name>A</name><Point><coordinates>8,47</coordinates></Point></Placemark></kml>")
        let noRadius = try await cli.run("regions", "import", point)
        #expect(noRadius.status == 1 && noRadius.stderr.contains("--radius"))
    }
}
