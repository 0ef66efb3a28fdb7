import Foundation

/// The MQTT broker and the Python with independent MQTT and libsodium peers that tools/test
/// starts (tools/mosquitto, tools/python) and names in FENCEPOST_TEST_MQTT
/// (`mqtt://127.0.0.1:PORT`) and FENCEPOST_TEST_PYTHON. Outside tools/test, start them by
/// hand and export the two; tests that need them are skipped when they are not set.
package enum TestBroker {
    package static var url: String? { ProcessInfo.processInfo.environment["FENCEPOST_TEST_MQTT"] }
    package static var python: String? { ProcessInfo.processInfo.environment["FENCEPOST_TEST_PYTHON"] }
    package static var available: Bool { url != nil && python != nil }

    /// The broker's host and port.
    package static var endpoint: (host: String, port: Int) {
        let authority = url!.replacingOccurrences(of: "mqtt://", with: "")
        let parts = authority.split(separator: ":")
        return (String(parts[0]), Int(parts[1])!)
    }

    /// Runs a Python script (with the broker's host and port as its first arguments, then
    /// `arguments`) and returns its standard output; a failure throws with its standard error.
    @discardableResult
    package static func runPython(_ script: String, arguments: [String] = []) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python!)
        process.arguments = ["-c", script, endpoint.host, String(endpoint.port)] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PythonFailure(status: process.terminationStatus, standardError: String(decoding: err, as: UTF8.self))
        }
        return String(decoding: out, as: UTF8.self)
    }

    package struct PythonFailure: Error, CustomStringConvertible {
        package var status: Int32
        package var standardError: String
        package var description: String { "python exited \(status): \(standardError)" }
    }
}
