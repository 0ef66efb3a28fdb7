/// The store's SQL inside one transaction, the same for both backends: statements are written
/// once, with `?` placeholders, in the SQL SQLite and PostgreSQL share (`INSERT ... ON CONFLICT`,
/// `RETURNING`, `COALESCE`); where the two differ, the backend's ``SQLDialect`` says how. Used
/// from one thread at a time, inside the backend's `read` or `write`.
package protocol SQLTransaction: AnyObject {
    var dialect: any SQLDialect { get }

    /// Runs a statement; returns how many rows it changed.
    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int

    /// Every row a query returns.
    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow]

    /// Each row a query returns, as it comes (exports of millions of rows).
    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (SQLRow) throws -> Void) throws

    /// The backend's writer of an ingest's events, visit changes and outbox rows.
    func eventWriter(now: String) throws -> any EventWriting
}

extension SQLTransaction {
    @discardableResult
    package func execute(_ sql: String, _ arguments: (any SQLValueConvertible)...) throws -> Int {
        try execute(sql, arguments.map(\.sqlValue))
    }

    package func rows(_ sql: String, _ arguments: (any SQLValueConvertible)...) throws -> [SQLRow] {
        try rows(sql, arguments.map(\.sqlValue))
    }

    package func row(_ sql: String, _ arguments: (any SQLValueConvertible)...) throws -> SQLRow? {
        try rows(sql, arguments.map(\.sqlValue)).first
    }

    /// The first column of the first row, nil when there is no row (or it is NULL).
    package func value<Value: SQLValueConvertible>(_ sql: String, _ arguments: (any SQLValueConvertible)...) throws -> Value? {
        try rows(sql, arguments.map(\.sqlValue)).first.flatMap { $0.first(Value.self) }
    }

    /// The first column of every row.
    package func values<Value: SQLValueConvertible>(_ sql: String, _ arguments: [SQLValue] = []) throws -> [Value] {
        try rows(sql, arguments).compactMap { $0.first(Value.self) }
    }
}

/// Where the two backends' SQL differs: one implementation per backend, the only place that
/// knows.
package protocol SQLDialect: Sendable {
    /// A text member of a JSON object held in a text column.
    func jsonText(_ column: String, _ key: String) -> String

    /// A condition an outbox row (aliased `o`) must also meet before a consumer that reads the
    /// outbox in `seq` order may pass it: that no transaction still running can commit a row
    /// with a lower seq. Empty where one writer commits in seq order.
    var settledOutboxRow: String { get }

    /// Serialises, until the transaction ends, every transaction that takes the same lock (a
    /// region apply; a device's fixes): nothing where the store has one writer at a time.
    func lock(_ key: String, in transaction: any SQLTransaction) throws
}
