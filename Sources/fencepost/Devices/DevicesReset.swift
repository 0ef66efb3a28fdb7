import ArgumentParser
import FencepostCore
import FencepostStore

struct DevicesReset: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Forget a device's anchor and monitor state, so its next fix is taken whatever its time.",
        discussion: """
            For a device whose fixes are all dropped as already_seen because one wrong time \
            (milliseconds sent as seconds, a clock in the far future) moved its anchor past \
            every real fix. Its open visits close with the reason `reset` at its last fix time \
            (at the current time when that lies in the future); its events and visits are kept. \
            Exit code 1 when the store has no state for the device.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: "The device id.")
    var device: String

    @Flag(help: "Print the result as JSON.")
    var json = false

    func run() async throws {
        try await CommandFailure.reporting {
            let reset = try await store.open(createIfMissing: false).resetDevice(device)
            guard reset.hadState else {
                throw CommandFailure.invalidInput(["error: the store has no state for device \(device)"])
            }
            if json {
                Console.output(
                    JSONValue.object([
                        "device": .string(device),
                        "previous_anchor": reset.previousAnchor.map { .string(Timestamp.format(seconds: $0)) } ?? .null,
                        "visits_closed": .number(Double(reset.visitsClosed)),
                    ]).canonicalText())
            } else {
                let anchor = reset.previousAnchor.map { Timestamp.format(seconds: $0) } ?? "none"
                Console.output(
                    "reset \(device): anchor was \(anchor); \(reset.visitsClosed) open visit\(reset.visitsClosed == 1 ? "" : "s") closed (reason reset)"
                )
            }
        }
    }
}
