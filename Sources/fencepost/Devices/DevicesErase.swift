import ArgumentParser
import FencepostCore
import FencepostStore

struct DevicesErase: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase",
        abstract: "Erase a device: every row that names it, with deletes in the outbox so consumers erase too.",
        discussion: """
            Removes the device's events, visits, stored fixes, state, roster entry, \
            device-reported regions, health import anchors and sources, tokens scoped to it, and \
            the outbox rows and dead letters that carry its events and visits; then queues a \
            delete per event and visit (ids only), so a synced backend, webhooks and sinks erase \
            them too. One transaction: all of it or nothing. Says what it removed, table by \
            table. Erasing a device the store knows nothing of removes nothing and exits 0; a \
            later fix of the device starts it afresh.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: "The device id.")
    var device: String

    @Flag(help: "Print the result as JSON.")
    var json = false

    func run() async throws {
        try await CommandFailure.reporting {
            let erasure = try await store.open(createIfMissing: false).eraseDevice(device)
            if json {
                Console.output(erasure.json.canonicalText())
            } else if erasure.isEmpty {
                Console.output("erase \(device): nothing stored for this device")
            } else {
                let tables = erasure.removed.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                Console.output(
                    "erased \(device): \(tables.joined(separator: ", ")); \(erasure.outboxDeletes) delete\(erasure.outboxDeletes == 1 ? "" : "s") queued in the outbox"
                )
            }
        }
    }
}
