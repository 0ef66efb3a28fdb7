import Foundation

/// The backend a store syncs with: a `fencepost serve` base URL and a bearer token.
package struct SyncEndpoint: Sendable {
    package var baseURL: String
    package var token: String
    /// The most one request may take, sending and answering included.
    package var timeout: Duration

    /// Refuses anything but an http(s) URL with a host.
    package init(baseURL: String, token: String, timeout: Duration = .seconds(30)) throws {
        if let problem = Self.problem(baseURL) {
            throw SyncFailure.refused(status: 0, "\(baseURL) is not a backend's URL: \(problem)")
        }
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
        self.timeout = timeout
    }
}

/// Why a sync request failed, sorted by what to do about it.
package enum SyncFailure: Error, Sendable, CustomStringConvertible {
    /// The request never reached the backend (connection refused, no route, connect timeout):
    /// retry later; it does not count against a mutation's attempts.
    case unreachable(String)
    /// The backend may have seen the request (5xx, 408, 429, a dropped answer, a timeout):
    /// retry with backoff, at least `retryAfter` seconds later when the backend said so.
    case transient(String, retryAfter: Double?)
    /// The backend refused the whole request (bad token, wrong scope, not a sync endpoint):
    /// retrying cannot help until someone fixes the cause.
    case refused(status: Int, String)

    package var description: String {
        switch self {
        case .unreachable(let message): return "backend unreachable: \(message)"
        case .transient(let message, _): return message
        case .refused(let status, let message): return status == 0 ? message : "HTTP \(status): \(message)"
        }
    }
}

extension SyncEndpoint {
    /// What is wrong with a backend's base URL (`http://host:port[/prefix]`), or nil: refused
    /// at once, rather than retried for minutes as if the backend were away.
    static func problem(_ text: String) -> String? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            return "not a URL"
        }
        guard scheme == "http" || scheme == "https" else { return "the scheme must be http or https, not \(scheme)" }
        guard let host = components.host, !host.isEmpty else { return "no host" }
        let authority = text.dropFirst(scheme.count + 3).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.hasSuffix(":") { return "a colon without a port after the host" }
        if let port = components.port, !(1...65_535).contains(port) { return "port \(port) is out of range" }
        if components.query != nil || components.fragment != nil { return "a base URL has no query or fragment" }
        return nil
    }
}
