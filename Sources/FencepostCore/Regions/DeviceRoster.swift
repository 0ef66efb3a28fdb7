/// The devices people named and grouped (`fencepost devices apply`): a region's `groups` select
/// their members. A device not on the roster is still monitored, in no group.
public struct DeviceRoster: Sendable, Hashable {
    public struct Entry: Sendable, Hashable, Codable {
        public var device: String
        public var name: String?
        /// Group names, sorted, without repeats.
        public var groups: [String]
        /// Its phone's geofence budget, when the roster says it.
        public var budget: GeofenceBudget

        public init(
            device: String, name: String? = nil, groups: [String] = [], budget: GeofenceBudget = GeofenceBudget()
        ) {
            self.device = device
            self.name = name
            self.groups = Array(Set(groups)).sorted()
            self.budget = budget
        }

        /// `{"device", "name", "groups"}` (with `geofence_budget` and `platform` when given), as
        /// lists and the HTTP API give it.
        public var json: JSONValue {
            var members: [String: JSONValue] = [
                "device": .string(device), "name": name.map(JSONValue.string) ?? .null,
                "groups": .array(groups.map(JSONValue.string)),
            ]
            members.merge(budget.members) { $1 }
            return .object(members)
        }
    }

    /// By device id.
    public var entries: [String: Entry]
    /// Geofence budgets given to whole groups, by group name: a member's unless it has its own.
    public var groupBudgets: [String: GeofenceBudget]

    public init(_ entries: [Entry] = [], groupBudgets: [String: GeofenceBudget] = [:]) {
        self.entries = Dictionary(entries.map { ($0.device, $0) }, uniquingKeysWith: { _, last in last })
        self.groupBudgets = groupBudgets.filter { !$0.value.isEmpty }
    }

    /// The geofence budget of `device`'s phone: its own, else the smallest of its groups' (the
    /// strictest, whatever the order of the groups), else nil (the request's, or iOS's 20).
    public func geofenceBudget(of device: String) -> Int? {
        if let own = entries[device]?.budget.resolved { return own }
        return groups(of: device).compactMap { groupBudgets[$0]?.resolved }.min()
    }

    /// Every entry, by device id.
    public var sorted: [Entry] {
        entries.values.sorted { $0.device < $1.device }
    }

    /// The groups `device` is a member of (none when it is not on the roster).
    public func groups(of device: String) -> Set<String> {
        Set(entries[device]?.groups ?? [])
    }

    /// Whether `region` applies to `device`.
    public func applies(_ region: Region, to device: String) -> Bool {
        region.audience.includes(device: device, groups: groups(of: device))
    }
}
