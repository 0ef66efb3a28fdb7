package import Hummingbird
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// The service could not listen on its address: in use, not one of this machine's, not allowed.
package struct ListenError: Error, CustomStringConvertible {
    package var host: String
    package var port: Int
    package var reason: String

    package var description: String { "cannot listen on \(host):\(port): \(reason)" }
}

/// Runs the service until SIGTERM or SIGINT. A server that cannot bind ends the run at once
/// with a ``ListenError`` (every other service stops on the group's cancellation). A stop
/// signal always stops the process: a second one, or 30 s after the first, ends it even if a
/// service has not finished (``StopBackstop``).
package func runService(_ app: some ApplicationProtocol, settings: ServiceSettings) async throws {
    let backstop = StopBackstop(grace: 30)
    defer { backstop.finish() }
    do {
        try await app.runService()
    } catch let error as IOError where [EADDRINUSE, EADDRNOTAVAIL, EACCES, EPERM].contains(error.errnoCode) {
        throw ListenError(host: settings.host, port: settings.port, reason: listenReason(error.errnoCode))
    }
}

private func listenReason(_ code: Int32) -> String {
    switch code {
    case EADDRINUSE: return "address already in use (another process listens there)"
    case EADDRNOTAVAIL: return "address not available (not an address of this machine)"
    default: return "permission denied (ports below 1024 need privileges)"
    }
}
