import Foundation

/// A broker's address as a URL gives it: `SCHEME://[user[:password]@]host[:port][/path]`.
package struct BrokerEndpoint: Sendable, Equatable {
    package var host: String
    package var port: Int
    package var user: String?
    package var password: String?
    /// The path without its leading slash (Redis: the database number); empty when none.
    package var path: String

    /// Reads `url`, which must have scheme `scheme`; nil port means `defaultPort`.
    package static func parse(_ url: String, scheme: String, defaultPort: Int) -> Result<BrokerEndpoint, BrokerError> {
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == scheme else {
            return .failure(BrokerError("not a \(scheme):// URL: \(url)"))
        }
        guard var host = components.host, !host.isEmpty else { return .failure(BrokerError("no host in \(url)")) }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = components.port ?? defaultPort
        guard (1...65_535).contains(port) else {
            return .failure(BrokerError("the port of \(url) is not a number from 1 to 65535"))
        }
        guard components.query == nil, components.fragment == nil else {
            return .failure(BrokerError("\(url) has a query or fragment; only \(scheme)://host:port is read"))
        }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        return .success(
            BrokerEndpoint(
                host: host, port: port, user: components.user.flatMap { $0.isEmpty ? nil : $0 },
                password: components.password, path: path))
    }
}

/// A broker connection that failed or a reply that could not be read.
package struct BrokerError: Error, Sendable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}
