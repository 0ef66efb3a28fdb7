import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation

/// A folder of region configs (`*.geojson`) the monitored set is kept equal to, the way GitOps
/// tools keep a cluster equal to a repository: when the folder changes (and has held still for
/// ``Inbox/quietSeconds``, so a file being saved is not read half-written), it is planned and
/// applied. A config the reconciler refuses changes nothing; once fixed, it is applied.
final class RegionsFolder {
    let directory: String
    /// The files' names, sizes and modification times, as last acted on.
    private var applied: [String: FileStamp]?
    /// As last seen, and since when.
    private var seen: (stamps: [String: FileStamp], since: Date)?

    struct FileStamp: Equatable {
        var size: Int
        var modified: Date
    }

    /// What a look at the folder did.
    enum Outcome {
        case applied(RegionPlan)
        case refused(RegionConfigError)
    }

    init(directory: String) {
        self.directory = directory
    }

    /// Plans and applies the folder when it changed since it was last acted on (at the first
    /// look: always) and has held still; nil when there was nothing to do.
    func reconcile(store: Store, now: Date = Date()) async throws -> Outcome? {
        let stamps = Self.stamps(directory)
        if seen?.stamps != stamps { seen = (stamps, now) }
        guard stamps != applied, let seen else { return nil }
        let newest = stamps.values.map(\.modified).max() ?? .distantPast
        guard
            applied == nil || now.timeIntervalSince(seen.since) >= Inbox.quietSeconds
                || now.timeIntervalSince(newest) >= Inbox.quietSeconds
        else { return nil }
        let desired: [Region]
        do {
            desired = try RegionConfigLoader.load([directory])
        } catch {
            applied = stamps
            return .refused(error)
        }
        let plan = try await store.applyRegions(desired)
        applied = stamps
        return .applied(plan)
    }

    /// The `*.geojson` files the loader reads, with their sizes and modification times.
    static func stamps(_ directory: String) -> [String: FileStamp] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var stamps: [String: FileStamp] = [:]
        for name in names where name.hasSuffix(".geojson") && !name.hasPrefix(".") {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                let size = (attributes[.size] as? NSNumber)?.intValue,
                let modified = attributes[.modificationDate] as? Date
            else { continue }
            stamps[name] = FileStamp(size: size, modified: modified)
        }
        return stamps
    }
}
