import FencepostTestSupport
import Foundation

/// A `fencepost serve` on a free port of 127.0.0.1, started and waited for.
struct Served: Sendable {
    let process: Process
    let port: Int
    let output: TemporaryOutput

    var url: String { "http://127.0.0.1:\(port)" }

    /// Starts the service on `fencepost`'s store and waits (at most 60 s) for the port it prints.
    static func start(_ fencepost: FencepostProcess, config: String? = nil) async throws -> Served {
        let output = try TemporaryOutput()
        let process = try fencepost.start(
            ["serve", "--port", "0"] + (config.map { ["--config", $0] } ?? []), output: output)
        let port = try await offThePool { () throws -> Int in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let text = output.stderr()
                if let range = text.range(of: #"listening on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
                    let port = Int(text[range].split(separator: ":").last!)
                {
                    return port
                }
                guard process.isRunning else { break }
                usleep(20_000)
            }
            if process.isRunning { process.terminate() }
            throw FencepostProcess.Failure(
                description: "fencepost serve did not start: \(output.stderr().suffix(2000))")
        }
        return Served(process: process, port: port, output: output)
    }

    /// SIGTERM, then waits for the graceful shutdown.
    func stop() async throws {
        process.terminate()
        let process = process
        try await offThePool { process.waitUntilExit() }
        output.remove()
    }
}
