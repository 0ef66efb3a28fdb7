import FencepostTestSupport
import Foundation
import Synchronization
import Testing

/// The short form of tools/chaos: each campaign run by the `fencepost-chaos` executable against
/// the built `fencepost`, with few trials and small inputs. The figures are read from its JSON;
/// a lost, duplicated or changed row, a failed integrity check or a crash fails the test.
@Suite(.serialized) struct ChaosCampaignTests {
    /// An executable `swift build` put beside this test bundle.
    static func executable(_ name: String) -> String {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            directory = directory.deletingLastPathComponent()
        }
        return TestData.packageRoot.appendingPathComponent(".build/debug/\(name)").path
    }

    /// Runs `fencepost-chaos ARGUMENTS --json` and returns its exit status and parsed figures.
    static func chaos(_ arguments: [String]) async throws -> (status: Int32, figures: [[String: Any]], stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable("fencepost-chaos"))
        process.arguments = arguments + ["--json", "--fencepost", executable("fencepost")]
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let (status, output, errors) = try await offThePool {
            let errors = Thread.detachedRead(stderr.fileHandleForReading)
            let output = stdout.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, output, errors())
        }
        let figures = (try? JSONSerialization.jsonObject(with: output)) as? [[String: Any]] ?? []
        return (status, figures, errors)
    }

    static func number(_ row: [String: Any], _ key: String) -> Int {
        (row[key] as? NSNumber)?.intValue ?? -1
    }

    @Test func killCampaignLosesAndDuplicatesNothing() async throws {
        let generator = TestData.packageRoot.deletingLastPathComponent().appendingPathComponent(
            "shared/bench/gen_health_export.py"
        ).path
        let scenarios =
            FileManager.default.fileExists(atPath: generator) ? "ingest,health,serve,sync" : "ingest,serve,sync"
        let run = try await Self.chaos([
            "kill", "--trials", "3", "--scenarios", scenarios, "--fixes", "20000", "--days", "10", "--health-generator",
            generator,
            "--devices", "4", "--device-fixes", "600", "--batch", "50", "--mutations", "3000", "--sync-batch", "100",
            "--seed", "7",
        ])
        #expect(run.status == 0, "fencepost-chaos kill failed: \(run.stderr.suffix(3000))")
        #expect(run.figures.count == scenarios.split(separator: ",").count)
        for row in run.figures {
            let scenario = row["scenario"] as? String ?? "?"
            #expect(Self.number(row, "trials") == 3, "\(scenario)")
            #expect(Self.number(row, "kills_landed") >= 1, "\(scenario): no kill landed before the command finished")
            #expect(Self.number(row, "integrity_failures") == 0, "\(scenario)")
            #expect(Self.number(row, "lost") == 0, "\(scenario): \(row["examples"] ?? "")")
            #expect(Self.number(row, "duplicated") == 0, "\(scenario): \(row["examples"] ?? "")")
            #expect(Self.number(row, "changed") == 0, "\(scenario): \(row["examples"] ?? "")")
            if scenario == "serve" { #expect(Self.number(row, "answered_lost") == 0) }
        }
    }

    @Test func faultCampaignEndsWithExactlyTheRows() async throws {
        let run = try await Self.chaos([
            "faults", "--mutations", "400", "--batch", "5", "--events", "60", "--max-delay", "4", "--seed", "3",
        ])
        #expect(run.status == 0, "fencepost-chaos faults failed: \(run.stderr.suffix(3000))")
        #expect(run.figures.count == 2)
        for row in run.figures {
            let path = row["path"] as? String ?? "?"
            let faults = row["faults"] as? [String: Int] ?? [:]
            #expect(Self.number(row, "requests") > (faults["pass"] ?? 0), "\(path): no fault injected")
            #expect(Self.number(row, "expected") > 0, "\(path)")
            #expect(Self.number(row, "lost") == 0, "\(path): \(row["examples"] ?? "")")
            #expect(Self.number(row, "duplicated") == 0, "\(path): \(row["examples"] ?? "")")
            #expect(Self.number(row, "applied_twice") == 0, "\(path)")
        }
    }

    @Test(
        .enabled(
            if: ProcessInfo.processInfo.environment["FENCEPOST_TEST_PYTHON"] != nil,
            "needs tools/python's consumers (FENCEPOST_TEST_PYTHON, set by tools/test)"))
    func sinksCampaignDeliversEveryEventInOrder() async throws {
        let run = try await Self.chaos([
            "sinks", "--events", "800", "--devices", "4", "--batch", "20", "--broker-restarts", "3", "--kills", "2",
            "--seed", "5",
        ])
        #expect(run.status == 0, "fencepost-chaos sinks failed: \(run.stderr.suffix(3000))")
        #expect(run.figures.map { $0["sink"] as? String } == ["redis", "nats", "mqtt"])
        for row in run.figures {
            let sink = row["sink"] as? String ?? "?"
            let examples = "\(row["examples"] ?? "")"
            #expect(Self.number(row, "events") > 0, "\(sink)")
            #expect(Self.number(row, "broker_restarts") == 3, "\(sink)")
            #expect(Self.number(row, "kills") == 2, "\(sink)")
            #expect(Self.number(row, "lost") == 0, "\(sink): \(examples)")
            #expect(Self.number(row, "unknown") == 0, "\(sink): \(examples)")
            #expect(Self.number(row, "devices_out_of_order") == 0, "\(sink): \(examples)")
            #expect(Self.number(row, "duplicates_without_restart") == 0, "\(sink): \(examples)")
            if sink != "mqtt" { #expect(Self.number(row, "duplicates") == 0, "\(sink): \(examples)") }
        }
    }

    @Test func lockedStoreAndIdleConnections() async throws {
        let run = try await Self.chaos([
            "resources", "--checks", "lock,idle,devices", "--connections", "200", "--idle-timeout", "2",
            "--devices", "300", "--rounds", "2",
        ])
        #expect(run.status == 0, "fencepost-chaos resources failed: \(run.stderr.suffix(3000))")
        for row in run.figures {
            #expect(row["passed"] as? Bool == true, "\(row["check"] ?? "?"): \(row["notes"] ?? "")")
            #expect(Self.number(row, "crashes") == 0)
        }
    }
}

extension Thread {
    /// Reads `handle` to its end on a thread of its own; the returned function waits for it.
    static func detachedRead(_ handle: FileHandle) -> () -> String {
        let done = DispatchSemaphore(value: 0)
        let text = ReadText()
        Thread {
            let data = handle.readDataToEndOfFile()
            text.value.withLock { $0 = String(decoding: data, as: UTF8.self) }
            done.signal()
        }.start()
        return {
            done.wait()
            return text.value.withLock { $0 }
        }
    }
}

private final class ReadText: Sendable {
    let value = Mutex("")
}
