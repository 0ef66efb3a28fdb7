import ArgumentParser
import FencepostCore
import FencepostStore
import FencepostSync
import Foundation

struct SyncPull: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull",
        abstract: "Take the backend's region changes since the last pull into the monitored set.",
        discussion: """
            Each page of changes goes through the same reconciler as `regions apply` (open visits of \
            removed or reshaped regions close) and moves this store's cursor for that backend in the \
            same transaction. A region with a local edit not yet pushed keeps the local edit (a \
            pending local delete is never undone by a pull). Pulled changes are not queued back.
            """)

    @OptionGroup var store: StoreOptions
    @OptionGroup var backend: BackendOptions

    @Flag(help: "Print the report as JSON on stdout.")
    var json = false

    func run() async throws {
        let endpoint = try backend.endpoint()
        let store: Store = try await self.store.open()
        try await backend.exclusively(store) {
            let report: PullReport
            do {
                report = try await withHTTPClient { client in
                    try await RegionPuller(store: store, endpoint: endpoint, client: client).pull()
                }
            } catch let failure as SyncFailure {
                Console.error(["error: pull from \(endpoint.baseURL) failed: \(failure)"])
                throw SyncCommand.incomplete
            } catch {
                Console.error(["error: \(error)"])
                throw ExitCode(3)
            }
            var lines = [
                "pulled \(report.changes) region changes: \(report.added) added, \(report.updated) updated, \(report.removed) removed"
            ]
            if !report.keptLocal.isEmpty {
                lines.append("kept local edits not yet pushed: \(report.keptLocal.joined(separator: ", "))")
            }
            for (id, reason) in report.refused { lines.append("refused region \(id): \(reason)") }
            Console.error(lines)
            if json {
                Console.output(try JSONValueEncoder.canonicalText(PullJSON(report)))
            }
            if !report.refused.isEmpty { throw SyncCommand.incomplete }
        }
    }
}

/// `sync pull --json`.
private struct PullJSON: Encodable {
    struct Refusal: Encodable {
        var id: String
        var reason: String
    }

    var changes: Int
    var added: Int
    var updated: Int
    var removed: Int
    var keptLocal: [String]
    var refused: [Refusal]
    var cursor: String

    enum CodingKeys: String, CodingKey {
        case changes, added, updated, removed
        case keptLocal = "kept_local"
        case refused, cursor
    }

    init(_ report: PullReport) {
        changes = report.changes
        added = report.added
        updated = report.updated
        removed = report.removed
        keptLocal = report.keptLocal
        refused = report.refused.map { Refusal(id: $0.id, reason: $0.reason) }
        cursor = String(report.cursor)
    }
}
