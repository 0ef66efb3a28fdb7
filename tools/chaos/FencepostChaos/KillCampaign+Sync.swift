import FencepostTestSupport
import Foundation

extension KillCampaign {
    /// `sync push` of a queue of about `mutations` mutations to a live backend (`fencepost
    /// serve` on a store of its own), killed at a random moment and run again: the backend must
    /// end with exactly the client's events and visits, each mutation applied once (one
    /// applied key per outbox row), and the client's queue drained.
    func sync(mutations: Int, batch: Int) async throws -> Result {
        // About one mutation (an event, or a visit version) per 10 fixes of this workload.
        let workload = Workload(devices: 100, fixesPerDevice: max(10, mutations / 10), seed: seed)
        let template = try regionsTemplate("sync", workload)
        let trace = work.appendingPathComponent("sync-trace.csv").path
        try workload.writeCSV(trace)
        try fencepost(template).succeed(["ingest", trace])
        try? FileManager.default.removeItem(atPath: trace)
        let queued = try StoreContents.read(template)
        log("sync: a queue of \(queued.count("outbox")) mutations (\(queued.count("event")) events)")

        let backendTemplate = work.appendingPathComponent("sync-backend-template.db").path
        remove(backendTemplate)
        let token = try fencepost(backendTemplate).succeed(["tokens", "create", "--scope", "admin", "--name", "edge"])
            .stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)

        // The clean run: how long a whole push takes.
        let cleanClient = try copy(template, to: "sync-clean.db")
        let cleanBackend = try copy(backendTemplate, to: "sync-clean-backend.db")
        defer {
            remove(cleanClient)
            remove(cleanBackend)
        }
        var backend = try await Served.start(fencepost(cleanBackend))
        let arguments = { (url: String) in ["sync", "push", "--to", url, "--token", token, "--batch", String(batch)] }
        let clean = try fencepost(cleanClient).succeed(arguments(backend.url))
        try await backend.stop()
        let expected = try StoreContents.read(cleanBackend)
        let expectedExports = Array(try exports(cleanBackend).prefix(3))
        log(
            "sync: clean push \(String(format: "%.2f", clean.seconds)) s, backend holds \(expected.count("event")) events"
        )

        var result = Result(scenario: "sync")
        var random = SplitMix64(seed: seed)
        let began = Date()
        for trial in 1...trials {
            let client = try copy(template, to: "sync-trial.db")
            let server = try copy(backendTemplate, to: "sync-trial-backend.db")
            defer {
                remove(client)
                remove(server)
            }
            backend = try await Served.start(fencepost(server))
            let cli = fencepost(client)
            let process = try cli.start(arguments(backend.url))
            let delay = moment(&random, of: clean.seconds)
            let kill = try await offThePool {
                Thread.sleep(forTimeInterval: delay)
                let kill = Killer.kill(process, store: client)
                if !kill.landed { process.waitUntilExit() }
                return kill
            }
            result.trials += 1
            if kill.landed { result.killsLanded += 1 }
            if kill.midTransaction { result.midTransaction += 1 }
            let integrity = try StoreContents.integrityCheck(client)
            if integrity != "ok" {
                result.integrityFailures += 1
                result.examples.append("trial \(trial): integrity_check: \(integrity)")
            }
            let again = arguments(backend.url)
            let rerun = try await offThePool { try cli.run(again) }
            if rerun.status != 0 {
                result.rerunFailures += 1
                result.examples.append("trial \(trial): re-run exited \(rerun.status): \(rerun.stderr.suffix(300))")
            }
            try await backend.stop()

            // The backend against the clean run's backend: the same events and visits, and one
            // applied key per mutation of the client's queue.
            let held = try StoreContents.read(server)
            result.add(held.compared(to: expected, kinds: ["event", "visit"]))
            let applied = try SyncLedger.appliedKeys(server)
            let keys = Set((queued.rows["outbox"] ?? [:]).keys)
            result.lost += keys.subtracting(applied).count
            result.duplicated += applied.subtracting(keys).count
            let left = try SyncLedger.undelivered(client)
            if left > 0 {
                result.rerunFailures += 1
                result.examples.append("trial \(trial): \(left) mutations left undelivered")
            }
            if try Array(exports(server).prefix(3)) != expectedExports { result.exportsDiffering += 1 }
            log(
                "sync trial \(trial)/\(trials): \(kill.landed ? "killed" : "finished first")\(kill.midTransaction ? " mid-transaction" : ""), lost \(result.lost), duplicated \(result.duplicated)"
            )
        }
        result.seconds = Date().timeIntervalSince(began)
        return result
    }
}
