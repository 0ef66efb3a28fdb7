import AsyncHTTPClient
import FencepostTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A client that sends a body without end cannot hold `serve`: a chunked body (no length said
/// up front) that keeps coming is cut at `max_body_bytes` with a 413, and the service goes on
/// answering others.
@Suite struct EndlessBodyTests {
    @Test func aChunkedBodyWithoutEndIsCutAtTheLimit() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let token = try await cli.run("tokens", "create", "--scope", "device:phone", "--name", "phone").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let config = try cli.write("serve.json", #"{"max_body_bytes": 65536}"#)
        let (server, port) = try await cli.serve("--config", config)
        defer { server.terminate() }

        let answer = try await offThePool { try Self.postEndlessChunks(port: port, token: token) }
        #expect(answer.status.hasPrefix("HTTP/1.1 413"), "\(answer.status)")
        // Cut while the client was still sending (what it sent past the limit sat in the
        // sockets' buffers), not after the 64 MiB it was ready to send.
        #expect(answer.sent < 64 << 20, "sent \(answer.sent) bytes")

        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let health = try await client.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/healthz"), timeout: .seconds(10))
            #expect(health.status.code == 200)
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// Posts chunks of 4 KiB until the server answers or closes; returns its status line and
    /// how many body bytes went out.
    static func postEndlessChunks(port: Int, token: String) throws -> (status: String, sent: Int) {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EIO) }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func send(_ text: String) -> Bool {
            let bytes = Array(text.utf8)
            return bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                == bytes.count
        }
        let head =
            "POST /v1/devices/phone/locations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
            + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        guard send(head) else { throw POSIXError(.EPIPE) }
        let chunk = "1000\r\n" + String(repeating: " ", count: 4096) + "\r\n"
        var sent = 0
        // At most 64 MiB: far past the limit, so a service that did not cut would be seen.
        while sent < 64 << 20 {
            var poll = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            if Glibc.poll(&poll, 1, 0) > 0 { break }  // an answer (or the close) came
            guard send(chunk) else { break }
            sent += 4096
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(socket, &buffer, buffer.count, 0)
        let text = count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
        return (String(text.split(separator: "\r\n").first ?? ""), sent)
    }
}
