package import FencepostCore
package import Foundation

/// What one page of pulled region changes did.
package struct PulledRegions: Sendable {
    package var plan: RegionPlan
    /// Region ids whose change was not applied because a local edit of the same region is
    /// still waiting to be pushed (a pending local delete is never undone by a pull).
    package var keptLocal: [String]
    /// Region changes whose feature this store refuses, with the reason.
    package var refused: [(id: String, reason: String)]
}

extension Store {
    /// Applies region changes pulled from a backend through the reconciler — the monitored set
    /// with each change applied becomes the desired set — and saves the pull cursor, in one
    /// transaction. Changes to regions with a local edit not yet pushed are skipped; the
    /// result is not queued back to the backend.
    package func applyPulledRegions(
        _ changes: [SyncChange], cursorKey: String, cursor: Int64, at now: Date = Date()
    ) async throws -> PulledRegions {
        let timestamp = Timestamp.format(now)
        return try await write { tx in
            try await tx.dialect.lock("regions", in: tx)
            let waiting = Set(
                try await tx.values(
                    "SELECT DISTINCT entity_id FROM outbox WHERE entity = 'region' AND status IN ('pending', 'inflight')"
                ) as [String])
            var desired = Dictionary(
                uniqueKeysWithValues: try await Self.monitoredRegions(tx).map { ($0.region.id, $0.region) })
            var keptLocal: [String] = []
            var refused: [(String, String)] = []
            let parser = RegionConfigParser()
            for change in changes where change.mutation.entity == .region {
                let id = change.mutation.id
                if waiting.contains(id) {
                    keptLocal.append(id)
                    continue
                }
                switch change.mutation.op {
                case .delete:
                    desired[id] = nil
                case .upsert:
                    do throws(RegionConfigError) {
                        let region = try parser.region(
                            fromFeature: Data(change.mutation.payload.utf8), source: "pulled region \(id)")
                        desired[id] = region
                    } catch {
                        refused.append((id, error.issues.map(\.description).joined(separator: "; ")))
                    }
                }
            }
            let plan = try await apply(
                desired.values.sorted { $0.id < $1.id }, timestamp: timestamp, origin: .pulled, tx: tx)
            try await Self.setSyncState(cursorKey, String(cursor), tx: tx)
            try await Self.setSyncState("pull.last_success_at", timestamp, tx: tx)
            return PulledRegions(plan: plan, keptLocal: Array(Set(keptLocal)).sorted(), refused: refused)
        }
    }
}
