import FencepostCore

/// The store's SQL inside one transaction, the same for both backends: statements are written
/// once, with `?` placeholders, in the SQL SQLite and PostgreSQL share (`INSERT ... ON CONFLICT`,
/// `RETURNING`, `COALESCE`); where the two differ, the backend's ``SQLDialect`` says how. Used
/// from one thread at a time, inside the backend's `read` or `write`.
package protocol SQLTransaction: AnyObject {
    var dialect: any SQLDialect { get }

    /// Runs a statement; returns how many rows it changed.
    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) async throws -> Int

    /// Every row a query returns.
    func rows(_ sql: String, _ arguments: [SQLValue]) async throws -> [SQLRow]

    /// Each row a query returns, as it comes (exports of millions of rows).
    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (SQLRow) throws -> Void) async throws

    /// Adds a row to the outbox, in this transaction. Rows reach the outbox in the order they
    /// were added, and the outbox's `seq` grows in the order transactions commit (where several
    /// write at once, each transaction's rows are added at its commit, one transaction at a
    /// time): a consumer reading by `seq` can never pass a row that commits later.
    func enqueue(_ row: OutboxRow) async throws

    /// The backend's writer of an ingest's events, visit changes and outbox rows.
    func eventWriter(now: String) throws -> any EventWriting

    /// Whether each statement is a round trip to a server, so the events of several inputs are
    /// better written with one call of the ``eventWriter(now:)``'s than one call per input
    /// (``IngestTransaction/write(inputs:now:)``).
    var writesInputsTogether: Bool { get }
}

/// A mutation for the outbox. `payload` is the entity as canonical JSON text, nil to refer to
/// the entity at `version` (see ``OutboxPayload``); `key` nil is the default `entity:id:vN`.
package struct OutboxRow {
    var entity: SyncEntity
    var id: String
    var op: SyncOperation = .upsert
    var version: Int
    var key: String?
    var payload: String?
    var createdAt: String

    static let insert = """
        INSERT INTO outbox (entity, entity_id, op, version, idempotency_key, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT DO NOTHING
        """

    var values: [SQLValue] {
        [
            .text(entity.name), .text(id), .text(op.rawValue), .integer(Int64(version)),
            key.map(SQLValue.text) ?? .null,
            payload.map(SQLValue.text) ?? .null, .text(createdAt),
        ]
    }
}

extension SQLTransaction {
    package var writesInputsTogether: Bool { false }

    @discardableResult
    package func execute(_ sql: String, _ arguments: (any SQLValueConvertible)...) async throws -> Int {
        try await execute(sql, arguments.map(\.sqlValue))
    }

    package func rows(_ sql: String, _ arguments: (any SQLValueConvertible)...) async throws -> [SQLRow] {
        try await rows(sql, arguments.map(\.sqlValue))
    }

    package func row(_ sql: String, _ arguments: (any SQLValueConvertible)...) async throws -> SQLRow? {
        try await rows(sql, arguments.map(\.sqlValue)).first
    }

    /// The first column of the first row, nil when there is no row (or it is NULL).
    package func value<Value: SQLValueConvertible>(_ sql: String, _ arguments: (any SQLValueConvertible)...)
        async throws -> Value?
    {
        try await rows(sql, arguments.map(\.sqlValue)).first.flatMap { $0.first(Value.self) }
    }

    /// Each row of `select` (ending in `... IN`) for the `ids`, a few hundred per statement: a
    /// database server is asked once per few hundred ids, not once per id.
    package func forEachRow(_ select: String, in ids: some Collection<String>, _ body: (SQLRow) throws -> Void)
        async throws
    {
        let ids = Array(ids)
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = ids[start..<min(start + 500, ids.count)]
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            for row in try await rows(select + " (" + marks + ")", chunk.map { .text($0) }) { try body(row) }
        }
    }

    /// The first column of every row.
    package func values<Value: SQLValueConvertible>(_ sql: String, _ arguments: [SQLValue] = []) async throws -> [Value]
    {
        try await rows(sql, arguments).compactMap { $0.first(Value.self) }
    }
}

/// Where the two backends' SQL differs: one implementation per backend, the only place that
/// knows.
package protocol SQLDialect: Sendable {
    /// A text member of a JSON object held in a text column.
    func jsonText(_ column: String, _ key: String) -> String

    /// A `SELECT` of the devices on the roster in the group its one `?` names (the roster keeps
    /// each device's groups as a JSON array of names): what a device column is checked against,
    /// `device IN (…)`, so that a group's reads follow the roster as it is when they run.
    var groupMembers: String { get }

    /// Serialises, until the transaction ends, every transaction that takes the same lock (a
    /// region apply; a device's fixes): nothing where the store has one writer at a time.
    func lock(_ key: String, in transaction: any SQLTransaction) async throws

    /// ``lock(_:in:)`` for each key, in the order given, in one statement.
    func lock(_ keys: [String], in transaction: any SQLTransaction) async throws

    /// ``lock(_:in:)`` if no other transaction holds the lock now; false (nothing taken) if one
    /// does. Never waits: a transaction already holding locks taken out of order takes more
    /// with this, so it can never be part of a circle of waits.
    func tryLock(_ key: String, in transaction: any SQLTransaction) async throws -> Bool
}
