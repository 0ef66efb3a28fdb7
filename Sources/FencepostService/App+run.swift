package import FencepostStore
import Hummingbird
package import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

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

/// Runs the service on `store` until SIGTERM or SIGINT, in one service group: the store's
/// connection pool (PostgreSQL) first, then the application (``buildApplication``), built once
/// the pool runs. The group stops them in reverse order: the server drains its requests and the
/// writer commits what is queued while the store can still take it, then the pool closes.
///
/// A server that cannot bind ends the run at once with a ``ListenError`` (every other service
/// stops on the group's cancellation). A stop signal always stops the process: a second one, or
/// 30 s after the first, ends it even if a service has not finished (``StopBackstop``).
package func runService(store: Store, settings: ServiceSettings, logger: Logger) async throws {
    let backstop = StopBackstop(grace: 30)
    defer { backstop.finish() }
    var services: [any Service] = []
    if let pool = store.poolService { services.append(pool) }
    services.append(ApplicationService(store: store, settings: settings, logger: logger))
    let group = ServiceGroup(
        configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    do {
        try await group.run()
    } catch let error as IOError where [EADDRINUSE, EADDRNOTAVAIL, EACCES, EPERM].contains(error.errnoCode) {
        throw ListenError(host: settings.host, port: settings.port, reason: listenReason(error.errnoCode))
    }
}

/// The application, built when the group starts it (its start-up reads the store).
private struct ApplicationService: Service {
    let store: Store
    let settings: ServiceSettings
    let logger: Logger

    func run() async throws {
        try await buildApplication(store: store, settings: settings, logger: logger).run()
    }
}

private func listenReason(_ code: Int32) -> String {
    switch code {
    case EADDRINUSE: return "address already in use (another process listens there)"
    case EADDRNOTAVAIL: return "address not available (not an address of this machine)"
    default: return "permission denied (ports below 1024 need privileges)"
    }
}
