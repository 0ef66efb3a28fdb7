import FencepostStore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The `fencepost` executable run as a user runs it, against one store (through FENCEPOST_DB):
/// a black box whose only outputs the campaigns trust are its exit status, its output and the
/// store it leaves behind.
struct FencepostProcess {
    let executable: String
    let database: String

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var seconds: Double
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `fencepost ARGUMENTS` to the end; its output goes through temporary files, so a
    /// large export never fills a pipe.
    func run(_ arguments: [String], environment extra: [String: String] = [:]) throws -> Result {
        let output = try TemporaryOutput()
        defer { output.remove() }
        let process = try start(arguments, output: output, environment: extra)
        let started = Date()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: output.stdout(), stderr: output.stderr(),
            seconds: Date().timeIntervalSince(started))
    }

    /// Runs it and requires exit status 0.
    @discardableResult
    func succeed(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let result = try run(arguments, environment: environment)
        guard result.status == 0 else {
            throw Failure(
                description:
                    "fencepost \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr.suffix(2000))"
            )
        }
        return result
    }

    /// Starts `fencepost ARGUMENTS` without waiting; its output goes to `output` (or nowhere).
    func start(_ arguments: [String], output: TemporaryOutput? = nil, environment extra: [String: String] = [:]) throws
        -> Process
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["FENCEPOST_DB"] = database
        environment.merge(extra) { _, new in new }
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output?.stdoutHandle ?? FileHandle.nullDevice
        process.standardError = output?.stderrHandle ?? FileHandle.nullDevice
        try process.run()
        return process
    }
}

/// Two temporary files a child process writes its stdout and stderr to.
final class TemporaryOutput: Sendable {
    private let base = FileManager.default.temporaryDirectory.appendingPathComponent(
        "fencepost-chaos-\(UUID().uuidString)"
    ).path
    let stdoutHandle: FileHandle
    let stderrHandle: FileHandle

    init() throws {
        _ = FileManager.default.createFile(atPath: base + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: base + ".err", contents: nil)
        stdoutHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: base + ".out"))
        stderrHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: base + ".err"))
    }

    func stdout() -> String { (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? "" }
    func stderr() -> String { (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? "" }

    func remove() {
        try? stdoutHandle.close()
        try? stderrHandle.close()
        try? FileManager.default.removeItem(atPath: base + ".out")
        try? FileManager.default.removeItem(atPath: base + ".err")
    }
}

/// What a SIGKILL found when it landed.
struct KillOutcome {
    /// The process was still running and died of the signal.
    var landed: Bool
    /// It held the store's write lock (an open write transaction) at that moment.
    var midTransaction: Bool
}

enum Killer {
    /// Freezes `process` (SIGSTOP), looks whether it holds the write lock of the SQLite store at
    /// `database` — SQLite in WAL mode takes it as a POSIX lock on byte 120 of the `-shm`
    /// file, so F_GETLK from here names its holder — then kills it (SIGKILL) and waits.
    static func kill(_ process: Process, store database: String?) -> KillOutcome {
        guard process.isRunning else { return KillOutcome(landed: false, midTransaction: false) }
        let pid = process.processIdentifier
        Glibc.kill(pid, SIGSTOP)
        // Stopping is asynchronous: wait until the kernel reports it stopped (or gone).
        for _ in 0..<2_000 where process.isRunning && state(of: pid) != "T" { usleep(500) }
        let holding = database.map { SQLiteWriteLock.holder(of: $0) == pid } ?? false
        Glibc.kill(pid, SIGKILL)
        process.waitUntilExit()
        let landed = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
        return KillOutcome(landed: landed, midTransaction: landed && holding)
    }

    /// The process's state letter from /proc (R running, S sleeping, T stopped…).
    static func state(of pid: Int32) -> Character? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        return text[text.index(after: close)...].first { !$0.isWhitespace }
    }
}
