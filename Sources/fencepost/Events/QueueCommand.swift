import ArgumentParser
import FencepostCore
import FencepostStore

struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Inspect the sync queue (the outbox of changes waiting to be pushed).",
        subcommands: [QueueStatus.self])
}

struct QueueStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show outbox depth by status.")

    @OptionGroup var store: StoreOptions

    @Option(help: "Output format: table or json.")
    var format: TableOrJSON = .table

    func run() async throws {
        try await CommandFailure.reporting {
            let counts = try await store.open(createIfMissing: false).outboxCounts()
            switch format {
            case .table:
                Console.output(
                    Table.render(
                        header: ["STATUS", "COUNT"],
                        rows: OutboxStatus.allCases.map { [$0.rawValue, String(counts[$0] ?? 0)] }))
            case .json:
                Console.output(
                    JSONValue.object(
                        Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, .number(Double($0.value))) })
                    ).canonicalText())
            }
        }
    }
}
