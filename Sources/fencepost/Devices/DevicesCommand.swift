import ArgumentParser

struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "Name and group devices (the roster), and manage what the store remembers of them.",
        discussion: """
            A region's `groups` selector applies it to the members of those groups; its `devices` \
            selector to the devices it names (ids, or patterns such as `truck-*`). A device not on \
            the roster is still monitored, against the regions for every device and those naming it.
            """,
        subcommands: [DevicesPlan.self, DevicesApply.self, DevicesList.self, DevicesReset.self, DevicesErase.self])
}
