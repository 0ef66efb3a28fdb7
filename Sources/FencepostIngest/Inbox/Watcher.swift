package import FencepostCore
package import FencepostStore
package import Foundation

/// `fencepost watch` and `serve`'s `"watch"` job: a regions folder the monitored set is kept
/// equal to, and an inbox whose files are each imported once (``FileImport``), then moved to
/// `done/` or `failed/`. Files already waiting when it starts go first, oldest first.
///
/// Not thread-safe: one task runs ``look(shouldStop:)`` and ``waitForChange(timeout:)`` in
/// turn. Every file and every apply is told to `report`, which callers log and count.
package final class Watcher {
    /// What to watch.
    package struct Folders: Sendable, Equatable {
        package var inbox: String?
        package var regions: String?

        package init(inbox: String? = nil, regions: String? = nil) {
            self.inbox = inbox
            self.regions = regions
        }
    }

    private let store: Store
    private let importer: FileImport?
    private let inbox: Inbox?
    private let regions: RegionsFolder?
    private let directories: DirectoryWatch
    /// Where ``waitForChange(timeout:)`` blocks.
    private let waiting = DispatchQueue(label: "fencepost.watch")
    private let report: (WatchReport) -> Void
    /// The time a look goes by (tests set it; a file holds still by this clock).
    private let now: () -> Date
    /// After the store failed to apply the regions folder, the next try waits until then.
    private var regionsRetryAfter = Date.distantPast
    /// A file the store failed on is tried again after this many seconds.
    static let retrySeconds = 5.0

    /// Makes the inbox with its `done/` and `failed/` when missing; the regions folder must be
    /// there (a missing one would be an empty config, which removes every region).
    package init(
        store: Store, folders: Folders, options: FileImport.Options, now: @escaping () -> Date = Date.init,
        report: @escaping (WatchReport) -> Void
    ) async throws {
        precondition(folders.inbox != nil || folders.regions != nil, "nothing to watch")
        self.store = store
        self.report = report
        self.now = now
        if let directory = folders.regions {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                throw WatchSetupError(path: directory, reason: "the regions folder is not a directory")
            }
            regions = RegionsFolder(directory: directory)
        } else {
            regions = nil
        }
        if let directory = folders.inbox {
            do {
                inbox = try Inbox(directory: directory)
            } catch {
                throw WatchSetupError(
                    path: directory, reason: "the inbox cannot be made: \(error.localizedDescription)")
            }
            importer = try await FileImport(store: store, options: options)
        } else {
            inbox = nil
            importer = nil
        }
        directories = DirectoryWatch([folders.regions, folders.inbox].compactMap { $0 })
    }

    /// Files waiting in the inbox, complete or not, at the last look.
    package var pending: Int { inbox?.waiting ?? 0 }

    /// One look at the folders: applies the regions folder when it changed, then imports every
    /// complete file of the inbox, oldest first. `shouldStop` is asked between files.
    package func look(shouldStop: () -> Bool = { false }) async {
        if let regions, now() >= regionsRetryAfter {
            do {
                switch try await regions.reconcile(store: store, now: now()) {
                case .applied(let plan)?: report(.regionsApplied(folder: regions.directory, plan: plan))
                case .refused(let error)?: report(.regionsRefused(folder: regions.directory, error: error))
                case nil: break
                }
            } catch {
                regionsRetryAfter = now().addingTimeInterval(Self.retrySeconds)
                report(.regionsFailed(folder: regions.directory, error: "\(error)"))
            }
        }
        guard let inbox, let importer else { return }
        let ready: [String]
        do {
            ready = try inbox.ready(now: now())
        } catch {
            report(.inboxUnreadable(folder: inbox.directory, error: error.localizedDescription))
            return
        }
        for name in ready {
            if shouldStop() { return }
            await take(name, from: inbox, with: importer)
        }
    }

    private func take(_ name: String, from inbox: Inbox, with importer: FileImport) async {
        let path = inbox.path(name)
        let outcome: FileImport.Outcome
        do {
            outcome = try await importer.run(path: path)
        } catch {
            guard FileManager.default.fileExists(atPath: path) else { return inbox.forget(name) }  // taken away meanwhile
            inbox.retryLater(name, seconds: Self.retrySeconds, now: now())
            return report(.importFailed(file: name, error: "\(error)"))
        }
        do {
            let movedTo: String
            if case .refused(let reason) = outcome {
                movedTo = try inbox.markFailed(name, reason: reason)
            } else {
                movedTo = try inbox.markDone(name)
            }
            report(.file(name: name, outcome: outcome, movedTo: movedTo))
        } catch {
            // Another watcher moved it first; what it held is in the store either way.
            guard FileManager.default.fileExists(atPath: path) else { return inbox.forget(name) }
            inbox.retryLater(name, seconds: Self.retrySeconds, now: now())
            report(.importFailed(file: name, error: "\(error)"))
        }
    }

    /// Waits until something changes in the folders, or `timeout` seconds pass. The wait
    /// blocks a thread of the watcher's own, never one of the cooperative pool.
    package func waitForChange(timeout: Double) async {
        let directories = UncheckedDirectoryWatch(watch: self.directories)
        let renamedIn = await withCheckedContinuation { continuation in
            waiting.async { continuation.resume(returning: directories.watch.wait(timeout: timeout)) }
        }
        for renamed in renamedIn where renamed.folder == inbox?.directory {
            inbox?.noteRenamedIn(renamed.name)
        }
    }
}

/// The folders' watch, handed to the watcher's waiting thread while the watcher awaits it.
private struct UncheckedDirectoryWatch: @unchecked Sendable {
    let watch: DirectoryWatch
}

/// What the watcher did, for the log and the metrics.
package enum WatchReport: Sendable {
    /// A file of the inbox was taken: imported, found already imported, or refused.
    case file(name: String, outcome: FileImport.Outcome, movedTo: String)
    /// A file could not be imported for a reason not its own; it is tried again later.
    case importFailed(file: String, error: String)
    case inboxUnreadable(folder: String, error: String)
    case regionsApplied(folder: String, plan: RegionPlan)
    /// The config was refused; the monitored set is as it was.
    case regionsRefused(folder: String, error: RegionConfigError)
    case regionsFailed(folder: String, error: String)

    /// The plan's changes of an apply (`+ add ID`, …), for a more detailed log.
    package var details: [String] {
        guard case .regionsApplied(_, let plan) = self else { return [] }
        return plan.lines
    }

    /// Whether the line reports a problem (logged as a warning or an error).
    package var isProblem: Bool {
        switch self {
        case .file(_, let outcome, _):
            if case .refused = outcome { return true }
            return false
        case .regionsApplied: return false
        default: return true
        }
    }

    /// The log lines: one per file or apply; a refused config also lists every problem.
    package var lines: [String] {
        switch self {
        case .file(let name, let outcome, let movedTo):
            switch outcome {
            case .ingested(let summary, let regions):
                let events = EventKind.allCases.compactMap { kind in
                    summary.events[kind].map { "\(kind.rawValue) \($0)" }
                }
                let devices = summary.devices.count
                let skipped = summary.skipped.values.reduce(0, +)
                return [
                    "imported \(name): \(summary.fixesRead) fixes read, \(summary.fixesAccepted) accepted"
                        + (skipped > 0 ? ", \(skipped) record\(skipped == 1 ? "" : "s") skipped" : "")
                        + ", \(devices) device\(devices == 1 ? "" : "s"), events: \(events.isEmpty ? "none" : events.joined(separator: ", "))"
                        + " -> \(movedTo)"
                        + (regions == 0
                            ? " (no region is monitored, so no events: add regions with `fencepost regions apply PATH` or watch a --regions folder)"
                            : "")
                ]
            case .healthImported(let health):
                let created = health.committed.created.values.reduce(0, +)
                let updated = health.committed.updated.values.reduce(0, +)
                return [
                    "imported \(name) (Apple Health export): \(created) events created, \(updated) updated -> \(movedTo)"
                ]
            case .alreadyImported(let earlier):
                return [
                    "already imported \(name) (the same content as \(earlier.name), imported \(earlier.importedAt)) -> \(movedTo)"
                ]
            case .refused(let reason):
                return ["refused \(name): \(reason) -> \(movedTo)"]
            }
        case .importFailed(let file, let error):
            return ["could not import \(file) (tried again in \(Int(Watcher.retrySeconds)) s): \(error)"]
        case .inboxUnreadable(let folder, let error):
            return ["cannot read the inbox \(folder): \(error)"]
        case .regionsApplied(let folder, let plan):
            return ["regions applied from \(folder): \(plan.summary)"]
        case .regionsRefused(let folder, let error):
            let count = error.issues.count
            return error.issues.map { "regions in \(folder): error: \($0)" }
                + [
                    "regions in \(folder) refused: \(count) problem\(count == 1 ? "" : "s"); the monitored regions are as they were"
                ]
        case .regionsFailed(let folder, let error):
            return [
                "could not apply the regions in \(folder) (tried again in \(Int(Watcher.retrySeconds)) s): \(error)"
            ]
        }
    }
}

/// A folder the watcher cannot start with.
package struct WatchSetupError: Error, CustomStringConvertible {
    package var path: String
    package var reason: String
    package var description: String { "\(path): \(reason)" }
}
