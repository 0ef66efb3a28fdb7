import ArgumentParser
import FencepostCore
import Foundation

struct RegionsImport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Turn third-party GeoJSON into a region config, printed on stdout.",
        discussion: """
            Open-data districts and POI lists rarely carry Fencepost ids or radii. This takes ids \
            from a property (unsafe characters become '-'), names from another, and gives Point \
            features a radius; other properties are kept. The result is validated like any config. Example:
              fencepost regions import neighbourhoods.geojson \\
                --id-property AREA_SHORT_CODE --id-prefix toronto: \\
                --name-property AREA_NAME > regions/toronto.geojson
            """)

    @Argument(help: ArgumentHelp("A GeoJSON FeatureCollection in WGS84 lon/lat.", valueName: "file"))
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
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw CommandFailure.invalidInput(["error: \(file): cannot read: \(error.localizedDescription)"])
            }
            let document: JSONValue
            do {
                document = try JSONParser.parse(data)
            } catch {
                throw CommandFailure.invalidInput(["error: \(file): invalid JSON at \(error)"])
            }
            let options = RegionImportOptions(
                idProperty: idProperty, idPrefix: idPrefix, nameProperty: nameProperty, radius: radius)
            let config = RegionImport.convert(document, options: options).canonicalData()
            let checked = RegionConfigParser().parse(config, file: file)
            do {
                _ = try RegionConfig.merge([checked])
            } catch let error as RegionConfigError {
                throw CommandFailure.invalidInput(RegionPlanOutput.issueLines(error))
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
