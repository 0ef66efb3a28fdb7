/// A roster group seen as a tenant: its member devices (the roster's, at one moment) and what
/// it may do with a region.
///
/// A tenant *sees* the regions that apply to at least one of its devices, everyone's included,
/// and *manages* only the regions whose selectors stay inside the group: `groups` naming this
/// group alone and `devices` naming member ids. A device pattern (`truck-*`) is never inside:
/// it could match a device that joins the roster later, in any group.
public struct GroupTenancy: Sendable, Hashable {
    public var group: String
    /// The group's devices on the roster.
    public var members: Set<String>
    /// Every group a member belongs to (this one too): a region for any of them reaches a member.
    public var membersGroups: Set<String>

    public init(group: String, roster: DeviceRoster) {
        self.group = group
        let entries = roster.entries.values.filter { $0.groups.contains(group) }
        members = Set(entries.map(\.device))
        membersGroups = Set(entries.flatMap(\.groups)).union([group])
    }

    /// Whether the region's selectors stay inside the group, so the tenant may change it.
    public func manages(_ region: Region) -> Bool {
        whyOutside(region) == nil
    }

    /// Why the region's selectors reach outside the group, or nil when they stay inside.
    public func whyOutside(_ region: Region) -> String? {
        let audience = region.audience
        if audience.isEveryone { return "it applies to every device (it has no devices or groups selector)" }
        if let other = audience.groups.first(where: { $0 != group }) {
            return "it selects the group \(other)"
        }
        if let pattern = audience.devices.first(where: RegionAudience.isPattern) {
            return "it selects devices by the pattern \(pattern), which may match devices outside the group"
        }
        if let stranger = audience.devices.first(where: { !members.contains($0) }) {
            return "it selects the device \(stranger), which is not in the group"
        }
        return nil
    }

    /// Whether the region applies to at least one of the group's devices (every region without
    /// selectors does), so the tenant may read it.
    public func sees(_ region: Region) -> Bool {
        let audience = region.audience
        if audience.isEveryone || audience.groups.contains(where: membersGroups.contains) { return true }
        return audience.devices.contains { selector in
            RegionAudience.isPattern(selector)
                ? members.contains { RegionAudience.matches($0, selector) } : members.contains(selector)
        }
    }
}
