import ArgumentParser
import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation

/// The roster file and output format `devices plan` and `devices apply` share.
struct RosterArguments: ParsableArguments {
    @Argument(
        help: ArgumentHelp(
            "A roster: CSV (device,name,groups[,geofence_budget,platform]; groups ;-separated) or JSON.",
            valueName: "file"))
    var file: String

    @Option(help: "Output format: text (one line per change and a summary) or json.")
    var format: PlanFormat = .text

    /// The desired roster, or its problem on stderr and exit code 1 (3 when the file could not
    /// be opened at all).
    func loadRoster() throws -> DeviceRoster {
        do {
            return try RosterFile.load(file)
        } catch {
            let line = "error: \(error) (nothing was applied)"
            throw error.unreadable ? CommandFailure.io(line) : CommandFailure.invalidInput([line])
        }
    }

    func render(_ plan: RosterPlan) -> String {
        switch format {
        case .text:
            var lines = plan.added.map { "+ add \($0.device)\(Self.described($0))" }
            lines += plan.updated.map { change in
                // Each changed field, before → after.
                func shown(_ groups: [String]) -> String { groups.isEmpty ? "(none)" : groups.joined(separator: ", ") }
                var fields: [String] = []
                if change.before.name != change.after.name {
                    fields.append("name \(change.before.name ?? "(none)") → \(change.after.name ?? "(none)")")
                }
                if change.before.groups != change.after.groups {
                    fields.append("groups \(shown(change.before.groups)) → \(shown(change.after.groups))")
                }
                if change.before.budget != change.after.budget {
                    fields.append("geofence budget \(change.before.budget.text) → \(change.after.budget.text)")
                }
                return "~ update \(change.after.device): \(fields.joined(separator: "; "))"
            }
            lines += plan.removed.map { "- remove \($0.device)" }
            lines += plan.groupBudgets.map {
                "~ group \($0.group): geofence budget \($0.before.text) → \($0.after.text)"
            }
            lines.append(
                "\(plan.added.count) to add, \(plan.updated.count) to update, \(plan.removed.count) to remove, \(plan.unchanged) unchanged"
            )
            return lines.joined(separator: "\n")
        case .json:
            func entries(_ list: [DeviceRoster.Entry]) -> JSONValue { .array(list.map(\.json)) }
            var members: [String: JSONValue] = [
                "add": entries(plan.added), "update": entries(plan.updated.map(\.after)),
                "remove": .array(plan.removed.map { .string($0.device) }),
                "unchanged": .number(Double(plan.unchanged)),
            ]
            // Only when some change: plans of rosters without group budgets stay as they were.
            if !plan.groupBudgets.isEmpty {
                members["group_budgets"] = .array(
                    plan.groupBudgets.map { .object($0.after.members.merging(["group": .string($0.group)]) { $1 }) })
            }
            return JSONValue.object(members).canonicalText()
        }
    }

    private static func described(_ entry: DeviceRoster.Entry) -> String {
        var text = entry.name.map { " \"\($0)\"" } ?? ""
        if !entry.groups.isEmpty { text += " [\(entry.groups.joined(separator: ", "))]" }
        if !entry.budget.isEmpty { text += " geofence budget \(entry.budget.text)" }
        return text
    }
}

struct DevicesPlan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show how the stored roster differs from a roster file; change nothing.")

    @OptionGroup var store: StoreOptions
    @OptionGroup var roster: RosterArguments

    func run() async throws {
        try await CommandFailure.reporting {
            let desired = try roster.loadRoster()
            let plan = try await (store.openIfPresent() ?? Store.inMemory()).planRoster(desired)
            Console.output(roster.render(plan))
        }
    }
}

struct DevicesApply: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Make the stored roster match a roster file, in one transaction.",
        discussion: """
            A device that leaves a group has its open visits in regions that no longer apply to it \
            closed (region_unassigned) in the same transaction.
            """)

    @OptionGroup var store: StoreOptions
    @OptionGroup var roster: RosterArguments

    func run() async throws {
        try await CommandFailure.reporting {
            let desired = try roster.loadRoster()
            Console.output(roster.render(try await store.open().applyRoster(desired)))
        }
    }
}

struct DevicesList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the roster: the devices named and grouped with `devices apply`.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, csv
    }

    @OptionGroup var store: StoreOptions

    @Option(help: "Output format: table, json or csv (a roster file: applying it again changes nothing).")
    var format: Format = .table

    func run() async throws {
        try await CommandFailure.reporting {
            let roster = try await store.open(createIfMissing: false).roster()
            let entries = roster.sorted
            // Budget columns only when the roster gives some: rosters without stay as they were.
            let budgets = entries.contains { !$0.budget.isEmpty }
            let groupBudgets = roster.groupBudgets.sorted { $0.key < $1.key }
            switch format {
            case .table:
                let rows = entries.map {
                    [$0.device, $0.name ?? "", $0.groups.joined(separator: ", ")]
                        + (budgets ? [$0.budget.isEmpty ? "" : $0.budget.text] : [])
                }
                var text = Table.render(
                    header: ["DEVICE", "NAME", "GROUPS"] + (budgets ? ["GEOFENCE BUDGET"] : []), rows: rows)
                for (group, budget) in groupBudgets { text += "\ngroup \(group): geofence budget \(budget.text)" }
                Console.output(text + "\n\(entries.count) device\(entries.count == 1 ? "" : "s")")
            case .json:
                let groups = groupBudgets.map {
                    JSONValue.object($0.value.members.merging(["group": .string($0.key)]) { $1 })
                }
                Console.output(JSONValue.array(entries.map(\.json) + groups).canonicalText())
            case .csv:
                if !groupBudgets.isEmpty {
                    Console.error(["warning: groups' geofence budgets are not in CSV; --format json keeps them"])
                }
                Console.output(
                    ([budgets ? "device,name,groups,geofence_budget,platform" : "device,name,groups"]
                        + entries.map {
                            ([$0.device, $0.name ?? "", $0.groups.joined(separator: ";")]
                                + (budgets ? [$0.budget.count.map(String.init) ?? "", $0.budget.platform ?? ""] : []))
                                .map(Self.csvField).joined(separator: ",")
                        }).joined(separator: "\n"))
            }
        }
    }

    private static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
