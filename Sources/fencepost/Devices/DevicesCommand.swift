import ArgumentParser

struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "Manage what the store remembers of devices.",
        subcommands: [DevicesReset.self])
}
