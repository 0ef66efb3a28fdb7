import ArgumentParser
import FencepostCore
import FencepostStore
import Foundation

struct RegionsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the monitored regions.",
        discussion: "The geojson format is a region config: applying it again changes nothing.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, geojson
    }

    @OptionGroup var store: StoreOptions

    @Option(help: "Output format: table, json (one object per region) or geojson (a region config).")
    var format: Format = .table

    func run() async throws {
        try await CommandFailure.reporting {
            let store = try await store.open(createIfMissing: false)
            switch format {
            case .table: Console.output(Self.table(try await store.monitoredRegions()))
            case .json: try await Self.stream(store, opening: "[", closing: "]\n") { Self.summary($0).canonicalText() }
            case .geojson:
                // The text of `featureCollection`, its keys in order, written a feature at a time.
                try await Self.stream(
                    store, opening: #"{"features":["#, closing: #"],"type":"FeatureCollection"}"# + "\n"
                ) {
                    $0.region.feature.canonicalText()
                }
            }
        }
    }

    /// Writes `opening`, each region's text (comma-separated), then `closing`, reading the regions
    /// a batch at a time: memory stays flat however many there are (a million regions' collection
    /// made whole peaked at 3.4 GiB).
    private static func stream(
        _ store: Store, opening: String, closing: String, _ text: (MonitoredRegion) -> String
    ) async throws {
        var output = try OutputSink(path: nil)
        try output.write(opening)
        var first = true
        try await store.forEachMonitoredRegionBatch { batch in
            for region in batch {
                if !first { try output.write(",") }
                first = false
                try output.write(text(region))
            }
        }
        try output.write(closing)
        try output.close()
    }

    private static func summary(_ monitored: MonitoredRegion) -> JSONValue {
        let region = monitored.region
        var object: [String: JSONValue] = [
            "id": .string(region.id),
            "kind": .string(region.shape.kind),
            "enabled": .bool(region.settings.enabled),
            "version": .number(Double(monitored.version)),
            "created_at": .string(monitored.createdAt),
            "updated_at": .string(monitored.updatedAt),
            "tags": .array(region.tags.map(JSONValue.string)),
            "content_hash": .string(region.contentHash),
        ]
        object["name"] = region.name.map(JSONValue.string) ?? .null
        if case .circle(_, let radius) = region.shape { object["radius"] = .number(radius) }
        if case .corridor(let corridor) = region.shape { object["buffer"] = .number(corridor.buffer) }
        return .object(object)
    }

    private static func table(_ regions: [MonitoredRegion]) -> String {
        let header = ["ID", "KIND", "NAME", "VERSION", "ENABLED", "UPDATED"]
        let rows = regions.map { monitored -> [String] in
            let region = monitored.region
            return [
                region.id, region.shape.kind, region.name ?? "", String(monitored.version),
                region.settings.enabled ? "yes" : "no", monitored.updatedAt,
            ]
        }
        let widths = header.indices.map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingTrailingSpaces()
        }
        return ([line(header)] + rows.map(line) + ["\(regions.count) region\(regions.count == 1 ? "" : "s")"])
            .joined(separator: "\n")
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
