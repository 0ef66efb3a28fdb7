import ArgumentParser
import FencepostCore
import FencepostStore
import Foundation

struct TokensCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "Manage the HTTP service's bearer tokens (the store keeps only their hashes).",
        subcommands: [TokensCreate.self, TokensList.self, TokensRevoke.self])
}

struct TokensCreate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create a token and print it alone on stdout: the only time it is shown.",
        discussion: """
            Scopes: admin (everything), read (read regions, events and visits), device:ID (post that \
            device's locations and read its events and visits), group:NAME (a tenant: post for, read \
            and manage only the roster group's devices and the regions whose selectors stay inside \
            the group; with --read-only it posts and manages nothing, listed as group-read:NAME).
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: "admin, read, device:ID or group:NAME.", transform: Self.scope)
    var scope: TokenScope

    @Flag(help: "With --scope group:NAME: read the group's data only, post and manage nothing.")
    var readOnly = false

    @Option(help: "A name to list and revoke it by (default: the scope and a random suffix).")
    var name: String?

    /// Parses `--scope` once, as the argument is read.
    private static func scope(_ text: String) throws -> TokenScope {
        guard let scope = TokenScope(text) else {
            throw ValidationError("--scope must be admin, read, device:ID or group:NAME, not \(text)")
        }
        return scope
    }

    func validate() throws {
        guard readOnly else { return }
        guard case .group = scope else {
            throw ValidationError("--read-only applies to --scope group:NAME (for all devices, use --scope read)")
        }
    }

    /// The scope stored: a group scope made read-only by `--read-only`.
    var storedScope: TokenScope {
        guard readOnly, case .group(let name, _) = scope else { return scope }
        return .group(name, readOnly: true)
    }

    func run() async throws {
        try await CommandFailure.reporting {
            let scope = storedScope
            let name = self.name ?? "\(scope)-\(UUID().uuidString.prefix(8).lowercased())"
            do {
                Console.output(try await store.open().createToken(name: name, scope: scope))
            } catch let error as StoreError {
                throw CommandFailure.invalidInput(["error: \(error)"])
            }
        }
    }
}

struct TokensList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List tokens: name, scope, creation time.")

    @OptionGroup var store: StoreOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        try await CommandFailure.reporting {
            let tokens = try await store.open(createIfMissing: false).tokens()
            if json {
                let items: [JSONValue] = tokens.map { token in
                    .object([
                        "name": .string(token.name), "scope": .string(token.scope.description),
                        "created_at": .string(token.createdAt),
                    ])
                }
                Console.output(JSONValue.array(items).canonicalText())
            } else {
                for token in tokens { Console.output("\(token.name)\t\(token.scope)\t\(token.createdAt)") }
            }
        }
    }
}

struct TokensRevoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke a token by name.")

    @OptionGroup var store: StoreOptions

    @Argument(help: "The token's name.")
    var name: String

    func run() async throws {
        try await CommandFailure.reporting {
            guard try await store.open(createIfMissing: false).revokeToken(name: name) else {
                throw CommandFailure.invalidInput(["error: no token named \(name)"])
            }
            Console.error(["revoked \(name)"])
        }
    }
}
