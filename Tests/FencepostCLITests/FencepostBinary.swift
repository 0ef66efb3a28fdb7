import FencepostTestSupport
import Foundation

/// Runs the built `fencepost` executable as a user would, with a store of its own.
struct FencepostBinary {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    let database: String
    let workDirectory: URL

    /// The executable `swift build` put beside this test bundle.
    static let executable: URL = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("fencepost")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return TestData.packageRoot.appendingPathComponent(".build/debug/fencepost")
    }()

    /// A fresh temporary directory holding the store; removed by `cleanUp()`.
    init() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
        database = workDirectory.appendingPathComponent("store.db").path
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// Writes a file under the work directory and returns its path.
    @discardableResult
    func write(_ relativePath: String, _ text: String) throws -> String {
        let url = workDirectory.appendingPathComponent(relativePath)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    func path(_ relativePath: String) -> String {
        workDirectory.appendingPathComponent(relativePath).path
    }

    /// A `fencepost ARGUMENTS` process against this store (through FENCEPOST_DB), not started.
    private func process(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["FENCEPOST_DB"] = database
        process.environment = environment
        return process
    }

    /// Starts `fencepost ARGUMENTS` without waiting, its output discarded (for kill tests).
    func start(_ arguments: String...) throws -> Process {
        let process = process(arguments)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Starts `fencepost serve --port 0 …` and waits for the port it prints on stderr.
    func serve(_ arguments: String...) throws -> (process: Process, port: Int) {
        let process = process(["serve", "--port", "0"] + arguments)
        let stderr = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        try process.run()
        var seen = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let chunk = stderr.fileHandleForReading.availableData
            if chunk.isEmpty { break }  // the process ended
            seen += String(decoding: chunk, as: UTF8.self)
            if let range = seen.range(of: #"listening on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                let port = Int(seen[range].split(separator: ":").last!)!
                // Keep draining stderr so the server never blocks on a full pipe.
                DispatchQueue.global().async { while !stderr.fileHandleForReading.availableData.isEmpty {} }
                return (process, port)
            }
        }
        process.terminate()
        throw ServeFailure(stderr: seen)
    }

    struct ServeFailure: Error {
        var stderr: String
    }

    /// Runs `fencepost ARGUMENTS` against this store (through FENCEPOST_DB) and waits for it.
    func run(_ arguments: String...) throws -> Result {
        let process = process(arguments)
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // Read both pipes fully before waiting, so a large output cannot block the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var errorData = Data()
        group.enter()
        DispatchQueue.global().async {
            errorData = stderr.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outputData = stdout.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: outputData, as: UTF8.self),
            stderr: String(decoding: errorData, as: UTF8.self))
    }
}
