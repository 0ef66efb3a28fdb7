import FencepostTestSupport
import Foundation
import Testing

/// The README's exit-code table, row by row, on every command it names: a file that cannot be
/// opened is 3, a file whose content is refused is 1, bad usage is 64, whatever the command.
@Suite struct ExitCodeTests {
    @Test(
        "a missing or unopenable input file exits 3",
        arguments: [
            ["ingest", "/nonexistent/walk.csv"], ["scan", "--regions", "REGIONS", "/nonexistent/walk.csv"],
            ["health", "import", "/nonexistent/export.zip"], ["regions", "plan", "/nonexistent/r.geojson"],
            ["regions", "apply", "/nonexistent/r.geojson"], ["regions", "import", "/nonexistent/x.geojson"],
            ["ingest", "DIRECTORY"], ["health", "import", "DIRECTORY"],
        ])
    func unopenableInput(arguments: [String]) async throws {
        let result = try await Self.run(arguments)
        #expect(result.status == 3, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains("no such file") || result.stderr.contains("is a directory"), "\(result.stderr)")
        #expect(!result.stderr.contains("fixes: 0 read"), "no summary of nothing")
    }

    @Test(
        "a file whose content is refused exits 1",
        arguments: [
            ["ingest", "EMPTY"], ["ingest", "BINARY"], ["scan", "--regions", "REGIONS", "EMPTY"],
            ["health", "import", "CSV"], ["regions", "plan", "CSV"], ["regions", "import", "CSV"],
        ])
    func refusedContent(arguments: [String]) async throws {
        let result = try await Self.run(arguments)
        #expect(result.status == 1, "\(arguments): \(result.stderr)")
    }

    @Test(
        "a command that only reads, on a store that does not exist, exits 3 and makes none",
        arguments: [
            ["regions", "list"], ["visits", "list"], ["events", "export"], ["queue", "status"], ["sync", "status"],
            ["tokens", "list"], ["devices", "reset", "van"], ["render", "timeline", "-o", "OUT.svg"],
        ])
    func missingStore(arguments: [String]) async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let result = try await cli.run(arguments.map { $0 == "OUT.svg" ? cli.path("t.svg") : $0 })
        #expect(result.status == 3, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains("no store at"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.database))
    }

    @Test(
        "bad usage exits 64",
        arguments: [
            ["ingest", "--hysteresis", "-1", "x.csv"], ["events", "export", "--kind", "bogus"],
            ["sync", "push", "--to", "http://127.0.0.1:", "--token", "t"], ["serve", "--port", "70000"],
            ["regions", "import", "x.geojson", "--id-property", "id", "--radius", "1e9"],
        ])
    func badUsage(arguments: [String]) async throws {
        let result = try await Self.run(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
    }

    /// Runs `arguments` against a fresh store, with the placeholders made real: REGIONS (a valid
    /// config), DIRECTORY, EMPTY (an empty file), BINARY, CSV (a CSV that is no trace, Health export
    /// or region config).
    static func run(_ arguments: [String]) async throws -> FencepostBinary.Result {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let files = [
            "REGIONS": try cli.write("regions.geojson", IngestCommandTests.region),
            "EMPTY": try cli.write("empty.csv", ""), "CSV": try cli.write("table.csv", "a,b\n1,2\n"),
            "BINARY": try cli.write(
                "binary.dat", String(decoding: [0x7F, 0x45, 0x4C, 0x46, 0, 1, 2, 0xFF, 10], as: UTF8.self)),
            "DIRECTORY": cli.workDirectory.path,
        ]
        return try await cli.run(arguments.map { files[$0] ?? $0 })
    }
}
