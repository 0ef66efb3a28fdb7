package import FencepostCore
package import Foundation

/// A region change a group tenant may not make: nothing of the request is written.
package enum GroupRegionRefusal: Error, Equatable, CustomStringConvertible {
    /// A region the group would have has selectors that reach outside the group.
    case outside(region: String, group: String, reason: String)
    /// The id belongs to a region the group does not manage (another group's, or everyone's).
    case notManaged(region: String, group: String)

    package var description: String {
        switch self {
        case .outside(let region, let group, let reason):
            return "region \(region) does not stay inside group \(group): \(reason)"
        case .notManaged(let region, let group):
            return "region \(region) is not one group \(group) manages (its selectors reach outside the group)"
        }
    }
}

/// The monitored set as one group's tenant sees it while editing: the regions it manages, and
/// the ids of the others, which it may neither change nor take over.
package struct GroupRegions: Sendable {
    package var tenancy: GroupTenancy
    /// The regions whose selectors stay inside the group, in id order.
    package var managed: [Region]
    /// Every other monitored region's id.
    package var otherIDs: Set<String>
}

extension Store {
    /// The group's tenancy: its members on the roster as it is now.
    package func groupTenancy(_ group: String) async throws -> GroupTenancy {
        GroupTenancy(group: group, roster: try await roster())
    }

    /// Those of `devices` that are not in roster group `group` now, sorted.
    package func devicesOutside(group: String, among devices: some Collection<String>) async throws -> [String] {
        let wanted = Set(devices)
        return try await read { tx in
            var inside = Set<String>()
            try await tx.forEachRow("SELECT device, groups FROM roster WHERE device IN", in: wanted.sorted()) { row in
                let groups = try JSONDecoder().decode([String].self, from: Data((row["groups"] as String).utf8))
                if groups.contains(group) { inside.insert(row["device"]) }
            }
            return wanted.subtracting(inside).sorted()
        }
    }

    /// The plan of a group's edit (``applyGroupRegions(_:at:editing:)``); changes nothing.
    package func planGroupRegions(_ group: String, editing edit: (GroupRegions) throws -> [Region]) async throws
        -> RegionPlan
    {
        try await read { tx in
            let (whole, groupIDs) = try await Self.wholeSet(group, edit: edit, tx: tx)
            var plan = try await Self.plan(whole, tx: tx)
            plan.unchanged = plan.unchanged.filter(groupIDs.contains)
            return plan
        }
    }

    /// Makes the regions group `group` manages equal the set `edit` makes of them, in one
    /// transaction with the roster deciding what the group manages: every other region stays as
    /// it is. A region `edit` returns that reaches outside the group, or that has the id of a
    /// region the group does not manage, refuses the whole edit (``GroupRegionRefusal``). The
    /// plan returned counts only the group's regions.
    @discardableResult
    package func applyGroupRegions(
        _ group: String, at now: Date = Date(), editing edit: (GroupRegions) throws -> [Region]
    ) async throws -> RegionPlan {
        let timestamp = Timestamp.format(now)
        return try await write { tx in
            try await tx.dialect.lock("regions", in: tx)
            let (whole, groupIDs) = try await Self.wholeSet(group, edit: edit, tx: tx)
            var plan = try await apply(whole, timestamp: timestamp, origin: .local, outboxReferences: true, tx: tx)
            plan.unchanged = plan.unchanged.filter(groupIDs.contains)
            return plan
        }
    }

    /// The whole desired set for a group's edit: the regions it does not manage as they are,
    /// and what `edit` makes of those it does (checked to stay inside the group), with the ids
    /// of the latter.
    private static func wholeSet(
        _ group: String, edit: (GroupRegions) throws -> [Region], tx: any SQLTransaction
    ) async throws -> (whole: [Region], groupIDs: Set<String>) {
        let tenancy = GroupTenancy(group: group, roster: try await roster(tx))
        let monitored = try await monitoredRegions(tx).map(\.region)
        let others = monitored.filter { !tenancy.manages($0) }
        let current = GroupRegions(
            tenancy: tenancy, managed: monitored.filter(tenancy.manages), otherIDs: Set(others.map(\.id)))
        let desired = try edit(current)
        for region in desired {
            if current.otherIDs.contains(region.id) {
                throw GroupRegionRefusal.notManaged(region: region.id, group: group)
            }
            if let reason = tenancy.whyOutside(region) {
                throw GroupRegionRefusal.outside(region: region.id, group: group, reason: reason)
            }
        }
        return (others + desired, Set(desired.map(\.id)))
    }
}
