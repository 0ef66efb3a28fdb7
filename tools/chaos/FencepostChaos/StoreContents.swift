import Foundation
import GRDB

/// What a store holds, read straight from its SQLite file: the rows campaigns compare, each
/// keyed by its identity (an event's or visit's id, an outbox row's idempotency key, a
/// device), with its content beside it.
struct StoreContents: Equatable {
    /// Kind of row → identity → content.
    var rows: [String: [String: String]] = [:]

    /// SQLite's `PRAGMA integrity_check` on the file: "ok", or what it found.
    static func integrityCheck(_ path: String) throws -> String {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        let lines = try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        return lines.joined(separator: "; ")
    }

    static let queries: [(kind: String, sql: String)] = [
        (
            "event",
            "SELECT id, kind || '|' || device || '|' || IFNULL(region, '') || '|' || IFNULL(visit_id, '') || '|' || time_ms || '|' || flags || '|' || properties || '|' || version FROM events"
        ),
        (
            "visit",
            "SELECT id, device || '|' || region || '|' || entered_ms || '|' || IFNULL(exited_ms, '') || '|' || status || '|' || IFNULL(exit_reason, '') || '|' || version FROM visits"
        ),
        (
            "outbox",
            "SELECT IFNULL(idempotency_key, entity || ':' || entity_id || ':v' || version), entity || '|' || entity_id || '|' || op || '|' || version FROM outbox"
        ),
        ("device", "SELECT device, IFNULL(anchor_ms, '') || '|' || state FROM devices"),
    ]

    /// Reads every compared row of the store at `path`.
    static func read(_ path: String, health: Bool = false) throws -> StoreContents {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        var contents = StoreContents()
        let queries =
            Self.queries
            + (health ? [("health_anchor", "SELECT owner || '/' || kind, anchor_ms FROM health_anchors")] : [])
        try queue.read { db in
            for (kind, sql) in queries {
                var rows: [String: String] = [:]
                let cursor = try Row.fetchCursor(db, sql: sql)
                while let row = try cursor.next() {
                    let key: String = row[0]
                    let content = row[1] as String? ?? (row[1] as Int64?).map(String.init) ?? ""
                    rows[key] = kind == "device" ? Self.canonicalDeviceState(content) : content
                }
                contents.rows[kind] = rows
            }
        }
        return contents
    }

    /// A device row (`anchor|state JSON`) with the state's keys sorted: the state is a JSON
    /// object whose key order is not part of its meaning (memberships are a dictionary).
    static func canonicalDeviceState(_ content: String) -> String {
        guard let bar = content.firstIndex(of: "|"),
            let state = try? JSONSerialization.jsonObject(with: Data(content[content.index(after: bar)...].utf8)),
            let sorted = try? JSONSerialization.data(withJSONObject: state, options: [.sortedKeys])
        else { return content }
        return content[..<bar] + "|" + String(decoding: sorted, as: UTF8.self)
    }

    /// Rows `expected` has that this store lacks (lost), rows it has that `expected` has not
    /// (duplicated: an event or mutation made twice, under another identity), and rows both
    /// have with different content.
    func compared(to expected: StoreContents, kinds: [String]? = nil) -> Difference {
        var difference = Difference()
        for kind in kinds ?? Array(expected.rows.keys) {
            let mine = rows[kind] ?? [:]
            let theirs = expected.rows[kind] ?? [:]
            for (key, content) in theirs {
                guard let found = mine[key] else {
                    difference.lost += 1
                    difference.examples.append("lost \(kind) \(key)")
                    continue
                }
                if found != content {
                    difference.changed += 1
                    difference.examples.append("changed \(kind) \(key): \(found) instead of \(content)")
                }
            }
            for key in mine.keys where theirs[key] == nil {
                difference.duplicated += 1
                difference.examples.append("extra \(kind) \(key)")
            }
        }
        difference.examples = Array(difference.examples.prefix(5))
        return difference
    }

    func count(_ kind: String) -> Int { rows[kind]?.count ?? 0 }
}

struct Difference {
    var lost = 0
    var duplicated = 0
    var changed = 0
    var examples: [String] = []

    var isEmpty: Bool { lost == 0 && duplicated == 0 && changed == 0 }
}

/// The two ends of sync, read from their files.
enum SyncLedger {
    /// The idempotency keys a backend has applied.
    static func appliedKeys(_ path: String) throws -> Set<String> {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in Set(try String.fetchAll(db, sql: "SELECT idempotency_key FROM sync_applied")) }
    }

    /// Outbox rows of a client not delivered yet (pending, in flight or dead).
    static func undelivered(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox WHERE status != 'delivered'") ?? 0
        }
    }
}

extension StoreContents {
    /// One number from the store at `path`.
    static func count(_ path: String, _ sql: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in try Int.fetchOne(db, sql: sql) ?? 0 }
    }
}
