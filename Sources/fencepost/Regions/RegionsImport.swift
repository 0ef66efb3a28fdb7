import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostHealth
import Foundation

struct RegionsImport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Turn third-party GeoJSON, KML or KMZ into a region config, printed on stdout.",
        discussion: """
            Open-data districts and POI lists rarely carry Fencepost ids or radii. This takes ids \
            from a property (unsafe characters become '-'), names from another, and gives Point \
            features a radius; other properties are kept. KML and KMZ (Google My Maps, Google Earth) \
            give their placemarks' points and polygons, named, with their folders as tags; lines are \
            skipped and counted. The result is validated like any config. Example:
              fencepost regions import neighbourhoods.geojson \\
                --id-property AREA_SHORT_CODE --id-prefix toronto: \\
                --name-property AREA_NAME > regions/toronto.geojson
            """)

    @Argument(
        help: ArgumentHelp("A GeoJSON FeatureCollection in WGS84 lon/lat, or a KML or KMZ file.", valueName: "file"))
    var file: String

    @Option(help: "The property to take each region's id from (default: the feature's id, else its index).")
    var idProperty: String?

    @Option(help: "Text put before every id, such as 'toronto:'.")
    var idPrefix: String = ""

    @Option(help: "The property to take each region's name from.")
    var nameProperty: String?

    @Option(help: "Radius in metres for Point features without one.")
    var radius: Double?

    @Option(name: [.short, .long], help: "Write the config to this file instead of stdout.")
    var output: String?

    func validate() throws {
        if let radius, !(radius > 0) { throw ValidationError("--radius must be greater than 0.") }
        if let radius, radius > RegionLimits.radius.maximum {
            throw ValidationError("--radius \(RegionLimits.radius.refusal(of: radius)).")
        }
    }

    func run() async throws {
        try CommandFailure.reporting {
            let bytes: [UInt8]
            do {
                bytes = try InputFile.read(file, limit: 1 << 30)
            } catch {
                throw CommandFailure.io("error: \(error)")
            }
            let document: JSONValue
            if let kml = try Self.placemarks(bytes, file: file) {
                document = kml.featureCollection
                for (reason, count) in kml.skipped.sorted(by: { $0.key < $1.key }) {
                    Console.error(["warning: \(file): skipped \(count) placemark\(count == 1 ? "" : "s"): \(reason)"])
                }
            } else {
                if let other = Self.otherFormat(bytes, file: file) {
                    throw CommandFailure.invalidInput(["error: \(file): \(other)"])
                }
                do {
                    document = try JSONParser.parse(bytes)
                } catch {
                    throw CommandFailure.invalidInput(["error: \(file): invalid JSON at \(error)"])
                }
            }
            let options = RegionImportOptions(
                idProperty: idProperty, idPrefix: idPrefix, nameProperty: nameProperty, radius: radius)
            let config = RegionImport.convert(document, options: options).canonicalData()
            let checked = RegionConfigParser().parse(config, file: file)
            do {
                _ = try RegionConfig.merge([checked])
            } catch let error as RegionConfigError {
                throw CommandFailure.invalidInput(Self.lines(error))
            }
            if let output {
                try OutputSink.checkWritable(output)
                do {
                    try config.write(to: URL(fileURLWithPath: output), options: .atomic)
                } catch {
                    throw CommandFailure.io("error: cannot write \(output): \(error.localizedDescription)")
                }
                Console.error(["wrote \(checked.regions.count) regions to \(output)"])
            } else {
                Console.output(String(decoding: config, as: UTF8.self))
            }
        }
    }
}

extension RegionsImport {
    /// The placemarks of a KML file, or of the KML document in a KMZ archive; nil for any other
    /// file. A malformed one is refused with its line.
    static func placemarks(_ bytes: [UInt8], file: String) throws -> KMLPlacemarks? {
        do throws(TraceReadError) {
            if bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) {
                let archive = try ZipArchive(path: file)
                guard let entry = archive.entries.first(where: { $0.name.lowercased().hasSuffix(".kml") }) else {
                    return nil
                }
                let reader = try archive.reader(for: entry)
                return try KMLPlacemarks(
                    source: ByteSource(name: reader.name, size: Int(clamping: entry.uncompressedSize)) {
                        () throws(TraceReadError) -> [UInt8]? in try reader.next()
                    })
            }
            let head = String(decoding: bytes.prefix(2048), as: UTF8.self)
            guard head.contains("<kml") else { return nil }
            return try KMLPlacemarks(source: ByteSource(name: file, bytes: bytes))
        } catch {
            throw CommandFailure.invalidInput(["error: \(error) (not a KML document Fencepost can read)"])
        }
    }

    /// What the file is when it is not GeoJSON but a format people keep regions in.
    static func otherFormat(_ bytes: [UInt8], file: String) -> String? {
        let lower = file.lowercased()
        // A shapefile's main file starts with the big-endian file code 9994.
        if bytes.starts(with: [0x00, 0x00, 0x27, 0x0A]) || lower.hasSuffix(".shp") || lower.hasSuffix(".dbf") {
            return "looks like a shapefile, not GeoJSON: convert it first, e.g. "
                + "`ogr2ogr -f GeoJSON -t_srs EPSG:4326 out.geojson \((file as NSString).lastPathComponent)` (GDAL)"
        }
        if bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) {
            return
                "a zip archive with no KML document, not GeoJSON (a zipped shapefile?): unpack it and convert to GeoJSON "
                + "(`ogr2ogr -f GeoJSON -t_srs EPSG:4326 out.geojson IN`)"
        }
        let head = String(decoding: bytes.prefix(512), as: UTF8.self).drop { $0.isWhitespace }
        if head.hasPrefix("<") {
            return "XML but not KML (GPX?), not GeoJSON: convert it (`ogr2ogr -f GeoJSON out.geojson IN`)"
        }
        return nil
    }

    /// The refusal's lines, with every Point that lacks a radius said once, with the option that
    /// gives them one, rather than once per point.
    static func lines(_ error: RegionConfigError) -> [String] {
        let (noRadius, others) = (
            error.issues.filter { $0.problem == .missingRadius }, error.issues.filter { $0.problem != .missingRadius }
        )
        guard !noRadius.isEmpty else { return RegionPlanOutput.issueLines(error) }
        let first = noRadius[0]
        var lines = [
            "error: \(first.file): \(noRadius.count) Point feature\(noRadius.count == 1 ? " has" : "s have") no radius "
                + "(the first: feature \(first.featureIndex ?? 0)); give them one with --radius METRES"
        ]
        if !others.isEmpty { lines += RegionPlanOutput.issueLines(RegionConfigError(issues: others)).dropLast() }
        lines.append("refused: \(error.issues.count) problems in the region config; nothing was written")
        return lines
    }
}
