package import FencepostCore
import Foundation

/// Reads region configs from files and directories (a directory is the union of its
/// `*.geojson` files, in name order, not recursing) and validates them as one set.
package enum RegionConfigLoader {
    /// The regions the paths declare, sorted by id; throws with every problem found.
    package static func load(_ paths: [String], parser: RegionConfigParser = RegionConfigParser())
        throws(RegionConfigError) -> [Region]
    {
        try RegionConfig.merge(files(paths, parser: parser))
    }

    /// The regions the paths declare as a plan reads them: features whose text the store
    /// last applied (by fingerprint, `sources`) recognised without being read, the rest read
    /// with their fingerprints. Throws as ``load(_:parser:)`` does, with the same problems: a
    /// config with any is read again whole.
    package static func desired(
        _ paths: [String], sources: RegionSourceIndex, parser: RegionConfigParser = RegionConfigParser()
    ) throws(RegionConfigError) -> DesiredRegions {
        let parsed = files(paths, parser: parser, sources: sources)
        if let desired = RegionConfig.desired(parsed) { return desired }
        let regions =
            parsed.allSatisfy(\.recognized.isEmpty)
            ? try RegionConfig.merge(parsed) : try RegionConfig.merge(files(paths, parser: parser))
        return DesiredRegions(regions: regions)
    }

    /// Each file the paths name, parsed on its own: its valid regions and its problems (a map
    /// of a refused config draws both).
    package static func files(
        _ paths: [String], parser: RegionConfigParser = RegionConfigParser(), sources: RegionSourceIndex? = nil
    ) -> [RegionFile] {
        var files: [RegionFile] = []
        for path in paths {
            let expanded = expand(path)
            if expanded.isEmpty {
                // Most likely a wrong path; applying it would remove every region.
                let problem = RegionConfigProblem.unreadable("directory has no *.geojson files")
                files.append(RegionFile(file: path, issues: [RegionConfigIssue(file: path, problem: problem)]))
            }
            for file in expanded {
                files.append(read(file, parser: parser, sources: sources))
            }
        }
        return files
    }

    /// The files a path names: itself, or the `*.geojson` files in it when it is a directory.
    static func expand(_ path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return [path]
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let base = path.hasSuffix("/") ? path : path + "/"
        return names.filter { $0.hasSuffix(".geojson") && !$0.hasPrefix(".") }.sorted().map { base + $0 }
    }

    private static func read(_ file: String, parser: RegionConfigParser, sources: RegionSourceIndex?) -> RegionFile {
        let bytes: [UInt8]
        do {
            bytes = try InputFile.read(file, limit: 1 << 30)
        } catch {
            return RegionFile(file: file, issues: [RegionConfigIssue(file: file, problem: .unreadable(error.reason))])
        }
        return parser.parse(bytes, file: file, sources: sources)
    }
}
