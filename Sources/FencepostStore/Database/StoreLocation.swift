import Foundation

/// What `--db` and `FENCEPOST_DB` name: a SQLite file (a path) or a PostgreSQL database
/// (`postgres://user:password@host:port/database`, also `postgresql://`, with
/// `?sslmode=disable|require`, a Unix socket through `?host=/path` and libpq's
/// `?connect_timeout=seconds`). A value that looks like
/// a URL of any other scheme is refused, never taken for a path.
package enum StoreLocation: Sendable, Equatable {
    case file(String)
    case postgres(PostgresURL)

    package init(_ text: String) throws {
        if let scheme = Self.scheme(of: text) {
            guard scheme == "postgres" || scheme == "postgresql" else {
                throw StoreOpenError.unsupportedURL("\(scheme)://: a store is a file path or a postgres:// URL")
            }
            self = .postgres(try PostgresURL(text))
        } else {
            self = .file(text)
        }
    }

    /// `$FENCEPOST_DB`, else `$XDG_DATA_HOME/fencepost/fencepost.db`, else
    /// `~/.local/share/fencepost/fencepost.db`.
    package static func defaultPath(environment: [String: String]) -> String {
        if let path = environment["FENCEPOST_DB"], !path.isEmpty { return path }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/fencepost/fencepost.db" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "."
        return home + "/.local/share/fencepost/fencepost.db"
    }

    /// The scheme of `scheme://...`, lowercased; nil for anything else (a path).
    private static func scheme(of text: String) -> String? {
        guard let separator = text.range(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound]
        guard let first = scheme.first, first.isLetter,
            scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." })
        else { return nil }
        return scheme.lowercased()
    }
}

/// A PostgreSQL database's address and login, read from a `postgres://` URL.
package struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    package var user: String
    package var password: String?
    /// A host name or address; nil with `socket`.
    package var host: String?
    package var port: Int
    /// A Unix-domain socket's path (`?host=/run/postgresql`, the folder, or the socket file).
    package var socket: String?
    package var database: String
    package var requireTLS: Bool
    /// `?connect_timeout=` (whole seconds, as libpq reads it): how long opening waits for the
    /// server, and how long a transaction waits for a connection before the store is reported
    /// unavailable. Nil: 10 s to open, 3 s for a transaction (a request is answered 503 soon).
    package var connectTimeout: Duration?

    init(_ text: String) throws {
        guard let components = URLComponents(string: text) else {
            throw StoreOpenError.unsupportedURL("not a URL: \(Self.redacting(text))")
        }
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
        for name in query.keys
        where ![
            "sslmode", "host", "port", "user", "password", "dbname", "connect_timeout",
        ].contains(name) {
            throw StoreOpenError.unsupportedURL("unknown parameter \(name) in \(Self.redacting(text))")
        }
        user =
            query["user"] ?? components.user.map { $0.removingPercentEncoding ?? $0 } ?? ProcessInfo.processInfo
            .environment["USER"] ?? "postgres"
        password = query["password"] ?? components.password.map { $0.removingPercentEncoding ?? $0 }
        port =
            try query["port"].map {
                guard let port = Int($0), (1...65_535).contains(port) else {
                    throw StoreOpenError.unsupportedURL("bad port \($0)")
                }
                return port
            } ?? components.port ?? 5432
        if let socketHost = query["host"], socketHost.hasPrefix("/") {
            // libpq's convention: the folder holds `.s.PGSQL.<port>`.
            socket = socketHost.hasSuffix(".s.PGSQL.\(port)") ? socketHost : socketHost + "/.s.PGSQL.\(port)"
            host = nil
        } else {
            host = query["host"] ?? components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "localhost"
            socket = nil
        }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = query["dbname"] ?? (path.isEmpty ? user : path)
        connectTimeout =
            try query["connect_timeout"].map {
                guard let seconds = Int($0), (1...3_600).contains(seconds) else {
                    throw StoreOpenError.unsupportedURL("bad connect_timeout \($0) (whole seconds, 1 to 3600)")
                }
                return .seconds(seconds)
            }
        switch query["sslmode"] ?? "disable" {
        case "disable", "allow", "prefer": requireTLS = false
        case "require": requireTLS = true
        case let mode: throw StoreOpenError.unsupportedURL("sslmode \(mode) (disable or require)")
        }
    }

    /// The URL without its password.
    package var description: String {
        let parameters = [
            socket.map { "host=\($0)" }, connectTimeout.map { "connect_timeout=\($0.components.seconds)" },
        ]
        .compactMap { $0 }
        let query = parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&")
        return "postgres://\(user)@\(host ?? "")\(socket == nil ? ":\(port)" : "")/\(database)\(query)"
    }

    private static func redacting(_ text: String) -> String {
        text.replacingOccurrences(of: #":[^:@/]*@"#, with: ":***@", options: .regularExpression)
    }
}
