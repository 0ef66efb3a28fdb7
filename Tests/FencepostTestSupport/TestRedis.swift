import Foundation

/// The Redis tools/test starts (tools/redis) and names in FENCEPOST_TEST_REDIS
/// (`redis://127.0.0.1:PORT`); tests that need it are skipped when it is not set. Tests read
/// what reached Redis with its own client, redis-cli, never with ours.
package enum TestRedis {
    package static var url: String? { ProcessInfo.processInfo.environment["FENCEPOST_TEST_REDIS"] }
    package static var available: Bool { url != nil }

    /// Runs `redis-cli -u URL ARGUMENTS...` and returns its standard output.
    @discardableResult
    package static func cli(_ url: String, _ arguments: [String]) async throws -> String {
        try await run("/usr/bin/redis-cli", ["-u", url] + arguments)
    }

    /// Runs `tools/redis ARGUMENTS...` (start, restart, stop a server of the test's own) and
    /// returns its standard output without the final newline.
    @discardableResult
    package static func tool(_ arguments: [String]) async throws -> String {
        try await run(TestData.packageRoot.appendingPathComponent("tools/redis").path, arguments)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    package static func run(_ executable: String, _ arguments: [String]) async throws -> String {
        try await offThePool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            let out = output.fileHandleForReading.readDataToEndOfFile()
            let err = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw ToolFailure(
                    command: ([executable] + arguments).joined(separator: " "), status: process.terminationStatus,
                    standardError: String(decoding: err, as: UTF8.self))
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    package struct ToolFailure: Error, CustomStringConvertible {
        package var command: String
        package var status: Int32
        package var standardError: String
        package var description: String { "\(command) exited \(status): \(standardError)" }
    }
}
