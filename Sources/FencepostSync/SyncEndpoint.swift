import Foundation

/// The backend a store syncs with: a `fencepost serve` base URL and a bearer token.
package struct SyncEndpoint: Sendable {
    package var baseURL: String
    package var token: String
    /// The most one request may take, sending and answering included.
    package var timeout: Duration

    /// Refuses anything but an http(s) URL with a host.
    package init(baseURL: String, token: String, timeout: Duration = .seconds(30)) throws {
        guard let url = URL(string: baseURL), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw SyncFailure.refused(status: 0, "\(baseURL) is not an http(s) URL")
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
