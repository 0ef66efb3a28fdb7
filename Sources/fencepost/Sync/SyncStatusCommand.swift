import ArgumentParser
import FencepostCore
import FencepostStore
import Foundation

struct SyncStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the push queue: depth by status, oldest pending age, last success and error.")

    @OptionGroup var store: StoreOptions

    @Option(help: "Output format: table or json.")
    var format: TableOrJSON = .table

    func run() async throws {
        try await CommandFailure.reporting {
            let status = try await store.open(createIfMissing: false).syncStatus()
            let age = status.oldestPendingAt.flatMap { Timestamp.parse(Substring($0)) }.map {
                Date().timeIntervalSince1970 - $0
            }
            switch format {
            case .json:
                var object = Dictionary(
                    uniqueKeysWithValues: status.counts.map { ($0.key.rawValue, JSONValue.number(Double($0.value))) })
                object["oldest_pending_at"] = status.oldestPendingAt.map(JSONValue.string) ?? .null
                object["oldest_pending_age_seconds"] = age.map { .number($0.rounded()) } ?? .null
                object["last_success_at"] = status.lastSuccessAt.map(JSONValue.string) ?? .null
                object["last_error"] = status.lastError.map(JSONValue.string) ?? .null
                object["last_error_at"] = status.lastErrorAt.map(JSONValue.string) ?? .null
                Console.output(JSONValue.object(object).canonicalText())
            case .table:
                var rows = OutboxStatus.allCases.map { [$0.rawValue, String(status.counts[$0] ?? 0)] }
                rows.append(["oldest pending", status.oldestPendingAt.map { "\($0) (\(Int(age ?? 0)) s ago)" } ?? "-"])
                rows.append(["last success", status.lastSuccessAt ?? "-"])
                rows.append(["last error", status.lastError.map { "\(status.lastErrorAt ?? "") \($0)" } ?? "-"])
                Console.output(Table.render(header: ["QUEUE", ""], rows: rows))
            }
        }
    }
}

struct SyncDeadLetterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dead-letter",
        abstract: "Inspect and requeue mutations the backend rejected or that ran out of attempts.",
        subcommands: [SyncDeadLetterList.self, SyncDeadLetterRetry.self])
}

struct SyncDeadLetterList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List dead-lettered mutations with their reason.")

    @OptionGroup var store: StoreOptions

    @Option(help: "Output format: table or json.")
    var format: TableOrJSON = .table

    func run() async throws {
        try await CommandFailure.reporting {
            let letters = try await store.open(createIfMissing: false).syncDeadLetters()
            switch format {
            case .json:
                Console.output(
                    JSONValue.array(
                        letters.map { letter in
                            .object([
                                "id": .number(Double(letter.seq)), "entity": .string(letter.entity),
                                "entity_id": .string(letter.entityID),
                                "key": .string(letter.key), "attempts": .number(Double(letter.attempts)),
                                "error": .string(letter.lastError),
                                "queued_at": .string(letter.createdAt),
                            ])
                        }
                    ).canonicalText())
            case .table:
                Console.output(
                    Table.render(
                        header: ["ID", "ENTITY", "ENTITY ID", "ATTEMPTS", "ERROR"],
                        rows: letters.map {
                            [String($0.seq), $0.entity, $0.entityID, String($0.attempts), $0.lastError]
                        }))
            }
        }
    }
}

struct SyncDeadLetterRetry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Put a dead-lettered mutation (by ID from `list`), or all with --all, back in the queue.")

    @OptionGroup var store: StoreOptions

    @Argument(help: "The mutation's ID, as `dead-letter list` shows it.")
    var id: Int64?

    @Flag(help: "Requeue every dead-lettered mutation.")
    var all = false

    func validate() throws {
        guard (id == nil) != !all else { throw ValidationError("give either an ID or --all.") }
    }

    func run() async throws {
        try await CommandFailure.reporting {
            let count = try await store.open(createIfMissing: false).retryDeadLetters(seq: all ? nil : id)
            if !all && count == 0 {
                throw CommandFailure.invalidInput(["error: no dead-lettered mutation with ID \(id!)"])
            }
            Console.error(["requeued \(count) mutation\(count == 1 ? "" : "s"); run fencepost sync push to send"])
        }
    }
}
