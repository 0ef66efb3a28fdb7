import ArgumentParser
import AsyncHTTPClient
import FencepostStore
import FencepostSync
import Foundation

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Push the outbox to a backend (another fencepost serve) and pull its regions.",
        discussion: """
            Events and visits (and local region edits) flow up with push; the backend's regions flow \
            down with pull. One sync runs at a time per store. Exit codes: 0 done (push: the queue \
            is drained); 2 something is left (pending after retries, or dead-lettered); 3 the store \
            could not be used; 75 another sync is running on this store.
            """,
        subcommands: [SyncPush.self, SyncPull.self, SyncStatusCommand.self, SyncDeadLetterCommand.self])

    /// Exit code when another sync holds the store's lock (EX_TEMPFAIL).
    static let busy = ExitCode(75)
    /// Exit code when the push left something behind.
    static let incomplete = ExitCode(2)
}

/// Where to sync with.
struct BackendOptions: ParsableArguments {
    @Option(
        name: [.customLong("to"), .customLong("from")],
        help: ArgumentHelp(
            "The backend's base URL, e.g. http://central:8080.", discussion: "Defaults to $FENCEPOST_SYNC_URL.",
            valueName: "url"))
    var url: String?

    @Option(
        help: ArgumentHelp(
            "A bearer token the backend accepts (admin, or device:ID for that device's data).",
            discussion: "Defaults to $FENCEPOST_SYNC_TOKEN.", valueName: "token"))
    var token: String?

    @Option(help: "Seconds one request may take before it counts as failed.")
    var timeout: Double = 30

    @Flag(help: "Wait for another sync on this store to finish instead of exiting with 75.")
    var wait = false

    /// A URL or token missing or malformed is refused before anything runs (exit 64).
    func validate() throws {
        _ = try endpoint()
    }

    func endpoint() throws -> SyncEndpoint {
        let environment = ProcessInfo.processInfo.environment
        guard let url = url ?? environment["FENCEPOST_SYNC_URL"] else {
            throw ValidationError("--to URL (or $FENCEPOST_SYNC_URL) is required.")
        }
        guard let token = token ?? environment["FENCEPOST_SYNC_TOKEN"] else {
            throw ValidationError("--token (or $FENCEPOST_SYNC_TOKEN) is required.")
        }
        guard timeout > 0, timeout <= 3_600 else {
            throw ValidationError("--timeout must be more than 0 and at most 3600 seconds.")
        }
        do {
            return try SyncEndpoint(baseURL: url, token: token, timeout: .milliseconds(Int64(timeout * 1000)))
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// Runs `body` holding the store's sync lock, or exits 75 (or waits, with --wait).
    func exclusively<T: Sendable>(_ store: Store, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let result = try await CommandFailure.reporting({ try await store.exclusivelySyncing(wait: wait, body) })
        else {
            Console.error(["error: another sync is running on \(store.location); try again later or pass --wait"])
            throw SyncCommand.busy
        }
        return result
    }
}

/// Runs `body` with an HTTP client that is shut down afterwards, however `body` ends.
func withHTTPClient<T>(_ body: (HTTPClient) async throws -> T) async throws -> T {
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    do {
        let result = try await body(client)
        try await client.shutdown()
        return result
    } catch {
        try? await client.shutdown()
        throw error
    }
}
