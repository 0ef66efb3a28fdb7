import AsyncHTTPClient
package import Foundation
import NIOCore
import NIOHTTP1

/// A real headless Chromium driven over the W3C WebDriver protocol by Debian's `chromedriver`
/// (packages `chromium` and `chromium-driver`, which `tools/setup` installs): for tests that
/// look at a page as a person would. Nothing is downloaded; a missing browser or driver is an
/// error naming the package.
package final class WebDriver: @unchecked Sendable {
    // @unchecked: the driver process and session are used from one test at a time.
    private let driver: Process
    private let client = HTTPClient(eventLoopGroupProvider: .singleton)
    private let base: String
    private var session = ""

    package static let chromium = ["/usr/bin/chromium", "/usr/lib/chromium/chromium"]
    package static let chromedriver = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Starts chromedriver on a free loopback port and opens a headless browser session.
    package static func start(width: Int = 1400, height: Int = 1000) async throws -> WebDriver {
        guard let browser = chromium.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw Failure(
                description:
                    "no Chromium at \(chromium.joined(separator: " or ")): run tools/setup (Debian package chromium)")
        }
        guard let driverPath = chromedriver.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw Failure(
                description:
                    "no chromedriver at \(chromedriver.joined(separator: " or ")): run tools/setup (Debian package chromium-driver)"
            )
        }
        let port = try freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: driverPath)
        process.arguments = ["--port=\(port)", "--allowed-ips=127.0.0.1"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let webDriver = WebDriver(driver: process, base: "http://127.0.0.1:\(port)")
        do {
            try await webDriver.waitUntilReady()
            let capabilities: [String: Any] = [
                "capabilities": [
                    "alwaysMatch": [
                        "browserName": "chrome",
                        "goog:chromeOptions": [
                            "binary": browser,
                            "args": [
                                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                "--window-size=\(width),\(height)", "--no-first-run",
                            ],
                        ],
                    ]
                ]
            ]
            let answer = try await webDriver.call("POST", "/session", capabilities)
            guard let id = (answer as? [String: Any])?["sessionId"] as? String else {
                throw Failure(description: "no session in \(answer)")
            }
            webDriver.session = id
        } catch {
            await webDriver.quit()
            throw error
        }
        return webDriver
    }

    private init(driver: Process, base: String) {
        self.driver = driver
        self.base = base
    }

    /// Ends the browser session and the driver.
    package func quit() async {
        if !session.isEmpty { _ = try? await call("DELETE", "/session/\(session)", nil, timeout: .seconds(10)) }
        driver.terminate()
        // A driver that does not stop on SIGTERM within 5 s is killed.
        for _ in 0..<50 where driver.isRunning { try? await Task.sleep(for: .milliseconds(100)) }
        if driver.isRunning { kill(driver.processIdentifier, SIGKILL) }
        try? await client.shutdown()
    }

    // MARK: - Commands

    package func open(_ url: String) async throws {
        _ = try await call("POST", "/session/\(session)/url", ["url": url])
    }

    /// The element a CSS selector finds, as the driver's reference.
    package func element(_ selector: String) async throws -> String {
        let answer = try await call(
            "POST", "/session/\(session)/element", ["using": "css selector", "value": selector])
        guard let reference = (answer as? [String: Any])?.values.first as? String else {
            throw Failure(description: "no element \(selector)")
        }
        return reference
    }

    package func type(_ text: String, into element: String) async throws {
        _ = try await call("POST", "/session/\(session)/element/\(element)/value", ["text": text])
    }

    package func click(_ element: String) async throws {
        _ = try await call("POST", "/session/\(session)/element/\(element)/click", [String: Any]())
    }

    /// Runs JavaScript in the page and returns its value (JSON types).
    package func script(_ source: String) async throws -> Any {
        try await call("POST", "/session/\(session)/execute/sync", ["script": source, "args": [Any]()])
    }

    /// Evaluates `source` (a JavaScript expression) until it is true, or fails after `timeout`.
    package func wait(for source: String, timeout: Double, _ what: String) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try await script("return !!(\(source));")) as? Bool == true { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw Failure(description: "not within \(timeout) s: \(what)")
    }

    /// A PNG of the browser's viewport.
    package func screenshot() async throws -> Data {
        let answer = try await call("GET", "/session/\(session)/screenshot", nil)
        guard let text = answer as? String, let data = Data(base64Encoded: text) else {
            throw Failure(description: "no screenshot")
        }
        return data
    }

    // MARK: - The protocol

    private func waitUntilReady() async throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let status = try? await call("GET", "/status", nil, timeout: .seconds(2)) as? [String: Any],
                status["ready"] as? Bool == true
            {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure(description: "chromedriver did not start at \(base)")
    }

    /// One WebDriver call: JSON in, the answer's `value` out; an error answer throws.
    @discardableResult
    private func call(_ method: String, _ path: String, _ body: Any?, timeout: TimeAmount = .seconds(60)) async throws
        -> Any
    {
        var request = HTTPClientRequest(url: base + path)
        request.method = HTTPMethod(rawValue: method)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: Array(try JSONSerialization.data(withJSONObject: body))))
        }
        let response = try await client.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 64 << 20)
        let object = try JSONSerialization.jsonObject(with: Data(bytes.readableBytesView), options: [.fragmentsAllowed])
        let value = (object as? [String: Any])?["value"] ?? NSNull()
        if response.status.code >= 400 {
            let message = (value as? [String: Any])?["message"] as? String ?? "\(value)"
            throw Failure(description: "WebDriver \(method) \(path): \(response.status.code) \(message)")
        }
        return value
    }

    /// A port no one listens on now (bound to 0 and released).
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
