import FencepostTestSupport
import Foundation

/// Kill -9 at a random moment, many times over: each trial copies a prepared store, starts a
/// command on it, freezes and kills it (SIGSTOP, a look at who holds the write lock, SIGKILL)
/// after a random share of a clean run's duration, checks the file with SQLite's
/// `integrity_check`, runs the work again to its end, and compares the store with the clean
/// run's: every event, visit, outbox row and device state, and the exports as text.
struct KillCampaign {
    let fencepost: String
    let work: URL
    let trials: Int
    let seed: UInt64
    let log: @Sendable (String) -> Void

    /// One scenario's figures.
    struct Result: Codable {
        var scenario: String
        var trials = 0
        /// Kills that found the command still running.
        var killsLanded = 0
        /// Of those, kills that found it holding the store's write lock.
        var midTransaction = 0
        var integrityFailures = 0
        /// Re-runs that did not end with exit 0.
        var rerunFailures = 0
        var lost = 0
        var duplicated = 0
        var changed = 0
        /// Trials whose exports differ from the clean run's.
        var exportsDiffering = 0
        /// serve: batches answered 200 before the kill whose events or progress were missing after it.
        var answeredLost: Int?
        /// serve: batches answered 200 before the kills, over all trials.
        var answeredBeforeKill: Int?
        var examples: [String] = []
        var seconds = 0.0

        init(scenario: String) { self.scenario = scenario }

        var passed: Bool {
            integrityFailures == 0 && rerunFailures == 0 && lost == 0 && duplicated == 0 && changed == 0
                && exportsDiffering == 0
                && (answeredLost ?? 0) == 0
        }

        mutating func add(_ difference: Difference) {
            lost += difference.lost
            duplicated += difference.duplicated
            changed += difference.changed
            if examples.count < 10 { examples += difference.examples }
        }
    }

    // MARK: - Trials

    /// A prepared store each trial starts from (copied), and what one clean run makes of it.
    struct Baseline {
        var template: String
        var contents: StoreContents
        var exports: [String]
        var seconds: Double
    }

    func fencepost(_ database: String) -> FencepostProcess {
        FencepostProcess(executable: fencepost, database: database)
    }

    /// A fresh store file for one trial: a copy of `template`'s files.
    func copy(_ template: String, to name: String) throws -> String {
        let path = work.appendingPathComponent(name).path
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
            if FileManager.default.fileExists(atPath: template + suffix) {
                try FileManager.default.copyItem(atPath: template + suffix, toPath: path + suffix)
            }
        }
        return path
    }

    func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm", ".sync-lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// The exports a user compares: events (CSV and JSON Lines with properties), visits, the queue.
    func exports(_ database: String) throws -> [String] {
        let cli = fencepost(database)
        return try [
            cli.succeed(["events", "export"]).stdout,
            cli.succeed(["events", "export", "--format", "jsonl"]).stdout,
            cli.succeed(["visits", "list", "--format", "csv"]).stdout,
            cli.succeed(["queue", "status", "--format", "json"]).stdout,
        ]
    }

    /// A random moment within a clean run: between 2 % and 98 % of its duration.
    func moment(_ random: inout SplitMix64, of seconds: Double) -> Double {
        seconds * (0.02 + 0.96 * random.unit())
    }

    /// Runs a command-line scenario: start `arguments`, kill it at a random moment, check,
    /// re-run, compare.
    func commandScenario(_ name: String, baseline: Baseline, arguments: [String], health: Bool = false) throws -> Result
    {
        var result = Result(scenario: name)
        var random = SplitMix64(seed: seed)
        let started = Date()
        for trial in 1...trials {
            let database = try copy(baseline.template, to: "\(name)-trial.db")
            defer { remove(database) }
            let cli = fencepost(database)
            let process = try cli.start(arguments)
            Thread.sleep(forTimeInterval: moment(&random, of: baseline.seconds))
            let kill = Killer.kill(process, store: database)
            if !kill.landed { process.waitUntilExit() }
            result.trials += 1
            if kill.landed { result.killsLanded += 1 }
            if kill.midTransaction { result.midTransaction += 1 }
            let integrity = try StoreContents.integrityCheck(database)
            if integrity != "ok" {
                result.integrityFailures += 1
                result.examples.append("trial \(trial): integrity_check: \(integrity)")
            }
            let rerun = try cli.run(arguments)
            if rerun.status != 0 {
                result.rerunFailures += 1
                result.examples.append("trial \(trial): re-run exited \(rerun.status): \(rerun.stderr.suffix(300))")
            }
            result.add(try StoreContents.read(database, health: health).compared(to: baseline.contents))
            if try exports(database) != baseline.exports { result.exportsDiffering += 1 }
            log(
                "\(name) trial \(trial)/\(trials): \(kill.landed ? "killed" : "finished first")\(kill.midTransaction ? " mid-transaction" : ""), integrity \(integrity), lost \(result.lost), duplicated \(result.duplicated)"
            )
        }
        result.seconds = Date().timeIntervalSince(started)
        return result
    }

    /// A clean run of `arguments` on a copy of `template`.
    func baseline(_ name: String, template: String, arguments: [String], health: Bool = false) throws -> Baseline {
        let database = try copy(template, to: "\(name)-clean.db")
        defer { remove(database) }
        let run = try fencepost(database).succeed(arguments)
        log("\(name): clean run \(String(format: "%.2f", run.seconds)) s")
        return Baseline(
            template: template, contents: try StoreContents.read(database, health: health),
            exports: try exports(database), seconds: run.seconds)
    }

    // MARK: - Scenarios

    /// `ingest` of a file of `fixes` fixes (100 devices) against 300 regions.
    func ingest(fixes: Int) throws -> Result {
        let workload = Workload(devices: 100, fixesPerDevice: max(1, fixes / 100), seed: seed)
        let trace = work.appendingPathComponent("trace-\(workload.fixCount).csv").path
        if !FileManager.default.fileExists(atPath: trace) {
            log("ingest: writing \(workload.fixCount) fixes")
            try workload.writeCSV(trace)
        }
        let template = try regionsTemplate("ingest", workload)
        let arguments = ["ingest", trace]
        let baseline = try baseline("ingest", template: template, arguments: arguments)
        log("ingest: \(baseline.contents.count("event")) events, \(baseline.contents.count("outbox")) outbox rows")
        return try commandScenario("ingest", baseline: baseline, arguments: arguments)
    }

    /// `health import` of a generated export of `days` days (../shared/bench/gen_health_export.py).
    func health(days: Int, generator: String) throws -> Result {
        let export = work.appendingPathComponent("export-\(days)d.zip").path
        if !FileManager.default.fileExists(atPath: export) {
            log("health: generating a \(days)-day export")
            let python = Process()
            python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            python.arguments = ["python3", generator, "--days", String(days), "--seed", String(seed), "--out", export]
            python.standardOutput = FileHandle.nullDevice
            try python.run()
            python.waitUntilExit()
            guard python.terminationStatus == 0 else {
                throw FencepostProcess.Failure(description: "\(generator) failed")
            }
        }
        // The generator's workout routes loop from home (New York, or Berlin when away):
        // regions there make the routes write geofence events too.
        let template = work.appendingPathComponent("health-template.db").path
        remove(template)
        let homes =
            #"{"type":"FeatureCollection","features":["#
            + #"{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.9866,40.7306]},"properties":{"id":"home","radius":150}},"#
            + #"{"type":"Feature","geometry":{"type":"Point","coordinates":[13.405,52.52]},"properties":{"id":"berlin","radius":150}}]}"#
        let regions = work.appendingPathComponent("homes.geojson").path
        try Data(homes.utf8).write(to: URL(fileURLWithPath: regions))
        try fencepost(template).succeed(["regions", "apply", regions])
        let arguments = ["health", "import", export]
        let baseline = try baseline("health", template: template, arguments: arguments, health: true)
        log("health: \(baseline.contents.count("event")) events, \(baseline.contents.count("outbox")) outbox rows")
        return try commandScenario("health", baseline: baseline, arguments: arguments, health: true)
    }

    /// A store holding the workload's regions.
    func regionsTemplate(_ name: String, _ workload: Workload) throws -> String {
        let template = work.appendingPathComponent("\(name)-template.db").path
        remove(template)
        let regions = work.appendingPathComponent("regions-\(workload.regionCount).geojson").path
        try Data(workload.regionsGeoJSON().utf8).write(to: URL(fileURLWithPath: regions))
        try fencepost(template).succeed(["regions", "apply", regions])
        return template
    }
}
