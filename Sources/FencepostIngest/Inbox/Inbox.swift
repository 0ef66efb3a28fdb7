import Foundation

/// A folder people and programs drop files into. A file is ready once it is complete: renamed
/// in (the watcher saw the rename), or its size and modification time held for
/// ``quietSeconds``. Ready files are taken oldest first; afterwards each goes to `done/`, or,
/// refused, to `failed/` beside `NAME.error.txt` saying why.
///
/// Hidden files (`.name`, as rsync and many tools write before renaming) and names ending in
/// `.tmp`, `.part`, `.partial`, `.crdownload` or `~` are left alone until renamed.
final class Inbox {
    /// As given (relative paths stay relative: messages name files as the user does).
    let directory: String
    static let quietSeconds = 2.0
    static let done = "done"
    static let failed = "failed"

    /// What was last seen of each waiting file, and since when it has been so.
    private struct Observation {
        var size: Int
        var modified: Date
        var since: Date
    }

    private var observed: [String: Observation] = [:]
    /// Names renamed into the folder since they were last looked at.
    private var renamedIn: Set<String> = []
    /// Files whose import failed for a reason not their own (the store), tried again after.
    private var retryAfter: [String: Date] = [:]

    /// Makes the folder and its `done/` and `failed/` when missing.
    init(directory: String) throws {
        self.directory = directory
        for folder in [
            directory, (directory as NSString).appendingPathComponent(Self.done),
            (directory as NSString).appendingPathComponent(Self.failed),
        ] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
    }

    /// Files waiting, complete or not (for metrics).
    private(set) var waiting = 0

    func noteRenamedIn(_ name: String) {
        renamedIn.insert(name)
    }

    /// The complete files, oldest first (by modification time, then name).
    func ready(now: Date = Date()) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter(Self.isCandidate)
        var ready: [(name: String, modified: Date)] = []
        var seen: [String: Observation] = [:]
        for name in names {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path(name)),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let size = (attributes[.size] as? NSNumber)?.intValue,
                let modified = attributes[.modificationDate] as? Date
            else { continue }
            var observation = Observation(size: size, modified: modified, since: now)
            if let earlier = observed[name], earlier.size == size, earlier.modified == modified {
                observation.since = earlier.since
            }
            seen[name] = observation
            if let after = retryAfter[name], now < after { continue }
            let held =
                now.timeIntervalSince(observation.since) >= Self.quietSeconds
                || now.timeIntervalSince(modified) >= Self.quietSeconds
            if renamedIn.contains(name) || held { ready.append((name, modified)) }
        }
        observed = seen
        waiting = seen.count
        renamedIn.formIntersection(seen.keys)
        retryAfter = retryAfter.filter { seen[$0.key] != nil }
        return ready.sorted { ($0.modified, $0.name) < ($1.modified, $1.name) }.map(\.name)
    }

    func path(_ name: String) -> String {
        (directory as NSString).appendingPathComponent(name)
    }

    /// Moves an imported (or already imported) file to `done/`; returns where it went.
    func markDone(_ name: String) throws -> String {
        try moveAside(name, to: Self.done)
    }

    /// Moves a refused file to `failed/`, with `NAME.error.txt` beside it holding `reason`.
    func markFailed(_ name: String, reason: String) throws -> String {
        let moved = try moveAside(name, to: Self.failed)
        try Data((reason + "\n").utf8).write(to: URL(fileURLWithPath: path(moved + ".error.txt")))
        return moved
    }

    /// Leaves a file waiting for `seconds` before it is tried again.
    func retryLater(_ name: String, seconds: Double, now: Date = Date()) {
        retryAfter[name] = now.addingTimeInterval(seconds)
    }

    /// Forgets a file that went away.
    func forget(_ name: String) {
        // Gone from the inbox: no longer waiting, before the next look counts again.
        if observed.removeValue(forKey: name) != nil { waiting = max(0, waiting - 1) }
        renamedIn.remove(name)
        retryAfter[name] = nil
    }

    /// Whether two paths name the same file (one is a hard link of the other).
    private static func sameFile(_ a: String, _ b: String) -> Bool {
        var first = stat()
        var second = stat()
        guard stat(a, &first) == 0, stat(b, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    /// Renames `name` into the subfolder, as `NAME`, else `STEM-2.EXT`, `STEM-3.EXT`, … when
    /// taken; returns the path relative to the inbox.
    private func moveAside(_ name: String, to folder: String) throws -> String {
        let (stem, extensions) = Self.split(name)
        var attempt = 1
        while true {
            let target = attempt == 1 ? name : "\(stem)-\(attempt)\(extensions)"
            let relative = "\(folder)/\(target)"
            // link + unlink never replaces a file already there; where the file system has no
            // hard links, rename after looking.
            if link(path(name), path(relative)) == 0 {
                unlink(path(name))
                forget(name)
                return relative
            }
            let failure = errno
            // The name is taken by this very file: another watcher of the inbox linked it there
            // a moment before (and unlinks it from the inbox now). Linking it again under
            // another name would put the file in the folder twice.
            if failure == EEXIST, Self.sameFile(path(name), path(relative)) {
                unlink(path(name))
                forget(name)
                return relative
            }
            // Gone already: another watcher of the same inbox (another process or instance)
            // moved it after both took it; its content is recorded once whoever committed it.
            if failure == ENOENT, !FileManager.default.fileExists(atPath: path(name)) {
                forget(name)
                return relative
            }
            if failure == EPERM || failure == ENOTSUP || failure == EMLINK,
                !FileManager.default.fileExists(atPath: path(relative))
            {
                try FileManager.default.moveItem(atPath: path(name), toPath: path(relative))
                forget(name)
                return relative
            }
            guard failure == EEXIST || failure == EPERM || failure == ENOTSUP || failure == EMLINK else {
                throw InboxError(
                    path: path(name), reason: "cannot be moved to \(folder)/: \(String(cString: strerror(failure)))")
            }
            attempt += 1
        }
    }

    /// `walk.csv.gz` → (`walk`, `.csv.gz`).
    static func split(_ name: String) -> (stem: String, extensions: String) {
        guard let dot = name.dropFirst().firstIndex(of: ".") else { return (name, "") }
        return (String(name[..<dot]), String(name[dot...]))
    }

    static func isCandidate(_ name: String) -> Bool {
        guard !name.hasPrefix("."), name != done, name != failed else { return false }
        return ![".tmp", ".part", ".partial", ".crdownload", "~"].contains { name.hasSuffix($0) }
    }
}

/// A file the inbox could not move.
struct InboxError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "\(path): \(reason)" }
}
