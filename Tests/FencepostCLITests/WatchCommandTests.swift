import FencepostTestSupport
import Foundation
import Testing

/// `fencepost watch` as a user runs it: a process watching real folders.
@Suite struct WatchCommandTests {
    /// Eight files of 40 walkers each, waiting in the inbox (a minute old, so complete).
    static func fillInbox(_ cli: FencepostBinary) throws -> [String] {
        // Enough files that the watcher is still at work when a loaded machine's test looks.
        let files = (0..<24).map { String(format: "part%02d.csv", $0) }
        for (index, file) in files.enumerated() {
            let walks = (0..<40).map {
                IngestCommandTests.walk(device: "f\(index)d\($0)").split(separator: "\n").dropFirst().joined(
                    separator: "\n")
            }
            let path = try cli.write(
                "inbox/\(file)", "time,lat,lon,accuracy,device\n" + walks.joined(separator: "\n") + "\n")
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(-60 + Double(index))], ofItemAtPath: path)
        }
        return files
    }

    static func done(_ cli: FencepostBinary) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: cli.path("inbox/done"))) ?? []).sorted()
    }

    /// Polls until `condition` holds or 60 s pass.
    static func waitFor(_ condition: () async throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("not reached in 60 s")
    }

    /// The watcher is killed (SIGKILL) while it imports the waiting files, then started again:
    /// every file's events are in the store exactly once, as one ingest of all the files gives.
    /// Each file commits whole or not at all: at the kill, the store holds whole files' events.
    @Test func killedMidImportThenRestartedImportsEachFileOnce() async throws {
        let watched = try FencepostBinary()
        let clean = try FencepostBinary()
        defer {
            watched.cleanUp()
            clean.cleanUp()
        }
        let regions = try watched.write("regions/stop.geojson", IngestCommandTests.region)
        #expect(
            try await clean.run("regions", "apply", clean.write("regions.geojson", IngestCommandTests.region)).status
                == 0)
        let files = try Self.fillInbox(watched)
        _ = try Self.fillInbox(clean)
        #expect(try await clean.run(["ingest"] + files.map { clean.path("inbox/\($0)") }).status == 0)
        let perFile = 40 * 2

        let process = try watched.start(
            "watch", "--inbox", watched.path("inbox"), "--regions", (regions as NSString).deletingLastPathComponent)
        // The first file moved to done/ (a directory listing: cheap enough to poll often; asking
        // the store takes a process of its own, by which time the watcher may have finished).
        try await Self.waitFor { !Self.done(watched).isEmpty || !process.isRunning }
        // Only while it runs: an ended process's id may be another's by now.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try await FencepostBinary.waitForExit(process)
        #expect(
            process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL,
            "the watcher was still running")
        let events = try await IngestCommandTests.eventCount(watched)
        let moved = Self.done(watched).count
        #expect(moved < files.count, "killed before the last file")
        // Whole files only: those moved, and perhaps one committed but not yet moved.
        #expect(events == moved * perFile || events == (moved + 1) * perFile, "\(events) events, \(moved) files done")

        let restarted = try watched.start("watch", "--inbox", watched.path("inbox"))
        try await Self.waitFor { Self.done(watched).count == files.count }
        kill(restarted.processIdentifier, SIGTERM)
        try await FencepostBinary.waitForExit(restarted)
        #expect(restarted.terminationStatus == 0)
        #expect(Self.done(watched) == files)
        let exports = try await (watched.run("events", "export").stdout, clean.run("events", "export").stdout)
        #expect(exports.0.split(separator: "\n").count == 1 + files.count * perFile)
        #expect(exports.0 == exports.1)
        let visits = try await (
            watched.run("visits", "list", "--format", "csv").stdout,
            clean.run("visits", "list", "--format", "csv").stdout
        )
        #expect(visits.0 == visits.1)
    }

    /// One line per file on stderr, then SIGTERM ends it with status 0.
    @Test func logsEachFileAndStopsOnSIGTERM() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(
            try await cli.run("regions", "apply", cli.write("regions.geojson", IngestCommandTests.region)).status == 0)
        try cli.write("inbox/.walk.csv.part", IngestCommandTests.walk())
        let process = Process()
        process.executableURL = FencepostBinary.executable
        process.arguments = ["watch", "--db", cli.database, "--inbox", cli.path("inbox")]
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try FileManager.default.moveItem(atPath: cli.path("inbox/.walk.csv.part"), toPath: cli.path("inbox/walk.csv"))
        try await Self.waitFor { Self.done(cli) == ["walk.csv"] }
        kill(process.processIdentifier, SIGTERM)
        try await FencepostBinary.waitForExit(process)
        #expect(process.terminationStatus == 0)
        let log = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(
            log.contains(
                "imported walk.csv: 300 fixes read, 300 accepted, 1 device, events: enter 1, exit 1 -> done/walk.csv"),
            "\(log)")
        #expect(try await IngestCommandTests.eventCount(cli) == 2)
    }

    @Test func aRegionsPathThatIsNoFolderIsAUsageError() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let result = try await cli.run("watch", "--inbox", cli.path("inbox"), "--regions", cli.path("nowhere"))
        #expect(result.status == 64 && result.stderr.contains("--regions: \(cli.path("nowhere")) is not a directory."))
        #expect(try await cli.run("watch").status == 64)
    }
}
