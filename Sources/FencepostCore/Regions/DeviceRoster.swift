/// The devices people named and grouped (`fencepost devices apply`): a region's `groups` select
/// their members. A device not on the roster is still monitored, in no group.
public struct DeviceRoster: Sendable, Hashable {
    public struct Entry: Sendable, Hashable, Codable {
        public var device: String
        public var name: String?
        /// Group names, sorted, without repeats.
        public var groups: [String]

        public init(device: String, name: String? = nil, groups: [String] = []) {
            self.device = device
            self.name = name
            self.groups = Array(Set(groups)).sorted()
        }

        /// `{"device", "name", "groups"}`, as lists and the HTTP API give it.
        public var json: JSONValue {
            .object([
                "device": .string(device), "name": name.map(JSONValue.string) ?? .null,
                "groups": .array(groups.map(JSONValue.string)),
            ])
        }
    }

    /// By device id.
    public var entries: [String: Entry]

    public init(_ entries: [Entry] = []) {
        self.entries = Dictionary(entries.map { ($0.device, $0) }, uniquingKeysWith: { _, last in last })
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
