import FencepostTestSupport
import Foundation
import Synchronization

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
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fencepost-cli-\(UUID().uuidString)")
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
        try start(arguments)
    }

    func start(_ arguments: [String]) throws -> Process {
        let process = process(arguments)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Starts `fencepost serve --port 0 …` and waits for the port it prints on stderr: at most
    /// `timeout`, after which (or when the server exits first) it is stopped and what it printed
    /// is thrown. Its stderr is read to the end on a thread of its own, so it never blocks on a
    /// full pipe and the wait holds no thread of the cooperative pool.
    func serve(_ arguments: String..., timeout: Duration = .seconds(30)) async throws -> (process: Process, port: Int) {
        let process = process(["serve", "--port", "0"] + arguments)
        let stderr = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        try process.run()
        let (chunks, output) = AsyncStream.makeStream(of: String.self)
        Thread {
            while case let chunk = stderr.fileHandleForReading.availableData, !chunk.isEmpty {
                output.yield(String(decoding: chunk, as: UTF8.self))
            }
            output.finish()
        }.start()
        let seen = Transcript()
        let port = await withTaskGroup(of: Int?.self) { group in
            group.addTask {
                for await chunk in chunks {
                    let text = seen.append(chunk)
                    if let range = text.range(
                        of: #"listening on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression)
                    {
                        return Int(text[range].split(separator: ":").last!)
                    }
                }
                return nil  // the server ended first
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        output.finish()  // from here on, the thread only drains the pipe
        guard let port else {
            process.terminate()
            throw ServeFailure(stderr: seen.text)
        }
        return (process, port)
    }

    struct ServeFailure: Error {
        var stderr: String
    }

    /// What a server printed so far.
    private final class Transcript: Sendable {
        private let state = Mutex("")

        var text: String { state.withLock { $0 } }

        /// Appends a chunk; returns everything so far.
        func append(_ chunk: String) -> String {
            state.withLock {
                $0 += chunk
                return $0
            }
        }
    }

    /// Runs `fencepost ARGUMENTS` against this store (through FENCEPOST_DB) and waits for it,
    /// off the cooperative pool.
    func run(_ arguments: String...) async throws -> Result {
        try await run(arguments)
    }

    func run(_ arguments: [String]) async throws -> Result {
        let process = process(arguments)
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        return try await offThePool {
            // Read both pipes fully before waiting, so a large output cannot block the child.
            let errorData = Mutex(Data())
            let errorRead = DispatchSemaphore(value: 0)
            Thread {
                let data = stderr.fileHandleForReading.readDataToEndOfFile()
                errorData.withLock { $0 = data }
                errorRead.signal()
            }.start()
            let outputData = stdout.fileHandleForReading.readDataToEndOfFile()
            errorRead.wait()
            process.waitUntilExit()
            return Result(
                status: process.terminationStatus,
                stdout: String(decoding: outputData, as: UTF8.self),
                stderr: String(decoding: errorData.withLock { $0 }, as: UTF8.self))
        }
    }

    /// Waits for a process started with `start` or `serve` to end, off the cooperative pool.
    static func waitForExit(_ process: Process) async throws {
        try await offThePool { process.waitUntilExit() }
    }
}
