import Crypto
import FencepostCore
package import Foundation

/// What a bearer token may do.
package enum TokenScope: Sendable, Hashable, CustomStringConvertible {
    /// Everything.
    case admin
    /// Read regions, events and visits; write nothing.
    case read
    /// Post this device's locations and read its events and visits.
    case device(String)
    /// A group as a tenant: post for, read and manage only the group's devices (roster members
    /// at the time of each request) and the regions whose selectors stay inside the group; a
    /// read-only one posts and manages nothing.
    case group(String, readOnly: Bool)

    /// `admin`, `read`, `device:ID`, `group:NAME` or `group-read:NAME` (a read-only group token).
    package init?(_ text: String) {
        switch text {
        case "admin": self = .admin
        case "read": self = .read
        default:
            if let id = Self.value(of: "device:", in: text) {
                self = .device(id)
            } else if let group = Self.value(of: "group:", in: text) {
                self = .group(group, readOnly: false)
            } else if let group = Self.value(of: "group-read:", in: text) {
                self = .group(group, readOnly: true)
            } else {
                return nil
            }
        }
    }

    /// What follows `prefix` in `text`, when `text` starts with it and something follows.
    private static func value(of prefix: String, in text: String) -> String? {
        guard text.hasPrefix(prefix), text.count > prefix.count else { return nil }
        return String(text.dropFirst(prefix.count))
    }

    package var description: String {
        switch self {
        case .admin: return "admin"
        case .read: return "read"
        case .device(let id): return "device:\(id)"
        case .group(let name, readOnly: false): return "group:\(name)"
        case .group(let name, readOnly: true): return "group-read:\(name)"
        }
    }
}

/// A token as listed: never its secret, which is only shown once, when created.
package struct TokenInfo: Sendable, Hashable {
    package var name: String
    package var scope: TokenScope
    package var createdAt: String
}

extension Store {
    /// Creates a token with a new random secret and returns the secret; the store keeps only
    /// its SHA-256. Throws `StoreError.tokenExists` when the name is taken.
    package func createToken(name: String, scope: TokenScope, at now: Date = Date()) async throws -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let secret =
            "fp_"
            + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
                of: "=", with: "")
        try await write { tx in
            let inserted = try await tx.execute(
                "INSERT INTO tokens (name, token_hash, scope, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
                name, Self.tokenHash(secret), scope.description, Timestamp.format(now))
            guard inserted > 0 else { throw StoreError.tokenExists(name) }
        }
        return secret
    }

    /// The scope of a presented token, or nil when no such token exists.
    package func tokenScope(secret: String) async throws -> (name: String, scope: TokenScope)? {
        try await read { tx in
            guard
                let row = try await tx.row(
                    "SELECT name, scope FROM tokens WHERE token_hash = ?", Self.tokenHash(secret)),
                let scope = TokenScope(row["scope"] as String)
            else { return nil }
            return (row["name"], scope)
        }
    }

    package func tokens() async throws -> [TokenInfo] {
        try await read { tx in
            try await tx.rows("SELECT name, scope, created_at FROM tokens ORDER BY name").compactMap { row in
                TokenScope(row["scope"] as String).map {
                    TokenInfo(name: row["name"], scope: $0, createdAt: row["created_at"])
                }
            }
        }
    }

    /// Removes a token; returns whether it existed.
    package func revokeToken(name: String) async throws -> Bool {
        try await write { tx in try await tx.execute("DELETE FROM tokens WHERE name = ?", name) > 0 }
    }

    static func tokenHash(_ secret: String) -> String {
        SHA256.hash(data: Data(secret.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
