import FencepostCore
import FencepostFormats
import FencepostHealth
import Foundation

/// Whole documents: region configs, and Apple Health exports (the XML, and the zip it comes in
/// with its workout routes).
enum DocumentTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget(
            "regions",
            "RegionConfigParser and the merge: a region config file; parsed regions written as GeoJSON parse back the same",
            regions),
        FuzzTarget("health-xml", "HealthExportReader and HealthImporter's plan: an export.xml", healthXML),
        FuzzTarget(
            "health-zip", "HealthExportFile: an export.zip read in place, its export.xml and workout route entries",
            healthZip),
    ]

    /// One parser for every input: it holds a GEOS context. The fuzzer and the replaying tests
    /// call a target from one thread at a time.
    nonisolated(unsafe) private static let parser = RegionConfigParser()

    static func regions(_ bytes: [UInt8]) -> FuzzOutcome {
        let file = parser.parse(Data(bytes), file: "fuzz.geojson")
        for (_, region) in file.regions {
            let written = parser.parse([region].featureCollection.canonicalData(), file: "written.geojson")
            guard written.issues.isEmpty, written.regions.count == 1 else {
                violated("region \(region.id) written as GeoJSON is refused: \(written.issues)")
            }
            if written.regions[0].region.contentHash != region.contentHash {
                violated("region \(region.id) written as GeoJSON parses to other content")
            }
        }
        guard let merged = try? RegionConfig.merge([file]) else { return .refused }
        return .accepted(merged.count)
    }

    static func healthXML(_ bytes: [UInt8]) -> FuzzOutcome {
        var reader = HealthExportReader(source: TraceTargets.chunkedSource(bytes))
        guard let plan = try? HealthImporter(options: HealthImportOptions(), anchors: [:]).plan(reading: &reader) else {
            return .refused
        }
        return .accepted(plan.events.count + plan.routes.count)
    }

    /// The archive is read from a file, as `health import` reads it; one file per process,
    /// rewritten for each input.
    private static let zipPath = FileManager.default.temporaryDirectory
        .appendingPathComponent("fencepost-fuzz-\(ProcessInfo.processInfo.processIdentifier).zip").path

    static func healthZip(_ bytes: [UInt8]) -> FuzzOutcome {
        guard FileManager.default.createFile(atPath: zipPath, contents: Data(bytes)) else { return .refused }
        defer { try? FileManager.default.removeItem(atPath: zipPath) }
        do {
            let export = try HealthExportFile(path: zipPath)
            var reader = HealthExportReader(source: try export.document())
            let plan = try HealthImporter(options: HealthImportOptions(), anchors: [:]).plan(reading: &reader)
            var count = plan.events.count
            for input in plan.routes {
                guard case .file(let reference) = input.route.points else { continue }
                // A broken route refuses the import, as `health import` does.
                var route = try TraceOpener.open(
                    try export.referencedFile(reference), format: .gpx, device: input.route.source)
                while try route.next() != nil { count += 1 }
            }
            return .accepted(count)
        } catch {
            return .refused
        }
    }
}
