import FencepostCore
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The store's SQL on a PostgreSQL connection, inside one of its transactions: each statement
/// is sent with its values bound (`?` placeholders become `$1`, `$2`, ...) and its answer
/// awaited; no thread waits for the server.
final class PostgresTransaction: SQLTransaction {
    let connection: PostgresConnection
    let dialect: any SQLDialect = PostgresDialect()

    /// Ends the wait of a statement whose connection closes.
    private let loss: ConnectionLoss

    init(_ connection: PostgresConnection) {
        self.connection = connection
        loss = ConnectionLoss.of(connection)
    }

    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) async throws -> Int {
        try await result(sql, arguments).metadata.rows ?? 0
    }

    func rows(_ sql: String, _ arguments: [SQLValue]) async throws -> [SQLRow] {
        var rows: [SQLRow] = []
        try each(try await result(sql, arguments)) { rows.append($0) }
        return rows
    }

    /// Through a cursor, `fetchSize` rows at a time: an export of millions of rows holds one
    /// page in memory, not the whole answer.
    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (SQLRow) throws -> Void) async throws {
        cursors += 1
        let cursor = "fencepost_rows_\(cursors)"
        try await execute("DECLARE \(cursor) NO SCROLL CURSOR FOR " + sql, arguments)
        while true {
            let page = try await result("FETCH \(Self.fetchSize) FROM \(cursor)", [])
            try each(page, body)
            if (page.metadata.rows ?? 0) < Self.fetchSize { break }
        }
        try await execute("CLOSE \(cursor)", [])
    }

    private static let fetchSize = 5_000
    private var cursors = 0

    private func each(_ result: PostgresQueryResult, _ body: (SQLRow) throws -> Void) throws {
        guard let first = result.rows.first else { return }
        let columns = SQLColumns(first.map(\.columnName))
        for row in result.rows {
            try body(SQLRow(columns: columns, values: try row.map(Self.value)))
        }
    }

    // MARK: - The outbox, in commit order

    /// Rows added to the outbox, waiting for the commit; past ``spillCount`` they wait in a
    /// temporary table instead (a big ingest's memory stays flat).
    private var pendingOutbox: [OutboxRow] = []
    private var spilledOutbox = 0
    /// Whether a row added carries an idempotency key. Without one no row can conflict (the
    /// only other unique column, `seq`, is generated), so the rows are inserted without
    /// `ON CONFLICT`: PostgreSQL's speculative insertion, a fifth of a big commit's outbox
    /// insert, is paid only when a conflict is possible.
    private var outboxHasKeys = false
    private static let spillCount = 10_000
    /// Rows per statement (each column of them one array bound, ``PostgresColumns``).
    static let rowsPerStatement = 2_000

    func enqueue(_ row: OutboxRow) async throws {
        pendingOutbox.append(row)
        if row.key != nil { outboxHasKeys = true }
        if pendingOutbox.count >= Self.spillCount { try await spillOutbox() }
    }

    /// Adds the transaction's outbox rows, in order, under a lock held until the commit: the
    /// outbox's writers take `seq` values one transaction at a time, each after the one before
    /// is visible, so a reader that has seen `seq` n has seen every row below it. The lock is
    /// the transaction's last: nothing waits for another lock while holding it.
    func flushOutbox() async throws {
        guard spilledOutbox > 0 || !pendingOutbox.isEmpty else { return }
        // What is left of a big transaction's rows joins the spilled ones before the lock.
        if spilledOutbox > 0 { try await spillOutbox() }
        // The `WHERE` makes it a statement of its own in pg_stat_statements, apart from the
        // devices' locks: its time there is the time commits waited for each other's numbering.
        // The notice rides along (one round trip less): whenever it is sent in the transaction,
        // it is delivered to every listening instance when the transaction commits
        // (``PostgresBackend/watchChanges(_:)``), and not at all if it rolls back.
        try await execute(
            """
            SELECT pg_advisory_xact_lock(\(PostgresBindings.key("outbox"))), pg_notify('\(PostgresBackend.changesChannel)', '')
            WHERE 'outbox numbering' IS NOT NULL
            """, [])
        if spilledOutbox > 0 {
            // The rows' numbers taken from the outbox's sequence at once, as `seq`'s default
            // would give them one by one (a sequence call per row is a twentieth of this
            // insert): the `ord` after the first. Under the lock no other writer numbers, so
            // the sequence moves past them before any other takes one (the `WITH` runs once). A
            // row not inserted (its key already there) leaves its number unused, as a sequence
            // call would: consumers expect gaps. Where keys may conflict, in `ord` order: where a
            // key comes twice, the first is the one kept. Without keys the numbers do not depend
            // on the order rows are read in, so the spill table is read as it lies (as it was
            // filled, in practice) without sorting it (the sort was a ninth of this insert).
            // The spill table goes with the commit (`ON COMMIT DROP`).
            try await execute(
                """
                INSERT INTO outbox (seq, entity, entity_id, op, version, idempotency_key, payload, created_at)
                    OVERRIDING SYSTEM VALUE
                WITH first AS (SELECT setval(pg_get_serial_sequence('outbox', 'seq'),
                    nextval(pg_get_serial_sequence('outbox', 'seq')) + $1 - 1) - $1 + 1 AS seq)
                SELECT first.seq + p.ord, p.entity, p.entity_id, p.op, p.version, p.idempotency_key, p.payload, p.created_at
                FROM fencepost_outbox_pending AS p CROSS JOIN first
                """ + (outboxHasKeys ? " ORDER BY p.ord ON CONFLICT DO NOTHING" : ""),
                [.integer(Int64(spilledOutbox))])
            spilledOutbox = 0
        } else {
            try await insertOutbox(
                into: "outbox (entity, entity_id, op, version, idempotency_key, payload, created_at)", pendingOutbox)
            pendingOutbox = []
        }
    }

    private func spillOutbox() async throws {
        if spilledOutbox == 0 {
            try await execute(
                """
                CREATE TEMPORARY TABLE fencepost_outbox_pending (ord BIGINT NOT NULL, entity TEXT, entity_id TEXT, op TEXT,
                    version INTEGER, idempotency_key TEXT, payload TEXT, created_at TEXT) ON COMMIT DROP
                """, [])
        }
        try await insertOutbox(
            into:
                "fencepost_outbox_pending (ord, entity, entity_id, op, version, idempotency_key, payload, created_at)",
            pendingOutbox, firstOrd: Int64(spilledOutbox))
        spilledOutbox += pendingOutbox.count
        pendingOutbox = []
    }

    /// Inserts outbox rows into `table`, in their order, ``rowsPerStatement`` at a time, each
    /// column one array (``PostgresColumns``); with `firstOrd`, the spill table's `ord` first
    /// (numbered on from it: the spill table has no index to keep; at the commit each row's
    /// `seq` is its `ord` after the first, ``flushOutbox()``). Conflicts ignored (in the outbox,
    /// where they can be: ``outboxHasKeys``).
    private func insertOutbox(into table: String, _ rows: [OutboxRow], firstOrd: Int64? = nil) async throws {
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(start + Self.rowsPerStatement, rows.count)]
            var columns = PostgresColumns()
            columns.append(chunk.map(\.entity.name))
            columns.append(chunk.map(\.id))
            columns.append(chunk.map(\.op.rawValue))
            columns.append(chunk.map { Int64($0.version) })
            columns.append(chunk.map(\.key))
            columns.append(chunk.map(\.payload))
            columns.append(chunk.map(\.createdAt))
            let ord: String
            if let firstOrd {
                columns.append(firstOrd + Int64(start) - 1)
                ord = "$8 + r.ord, "
            } else {
                ord = ""
            }
            try await execute(
                """
                INSERT INTO \(table) SELECT \(ord)entity, entity_id, op, version, idempotency_key, payload, created_at
                FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY
                    AS r (entity, entity_id, op, version, idempotency_key, payload, created_at, ord)
                ORDER BY r.ord
                """ + (firstOrd == nil && outboxHasKeys ? " ON CONFLICT DO NOTHING" : ""), columns)
            start += chunk.count
        }
    }

    func eventWriter(now: String) throws -> any EventWriting {
        PostgresEventWriter(now: now, transaction: self)
    }

    var writesInputsTogether: Bool { true }

    /// Runs a statement whose values are bound a column at a time (``PostgresColumns``), written
    /// with its placeholders numbered (`$1`, `$2`, ...); returns how many rows it changed.
    @discardableResult
    func execute(_ sql: String, _ columns: PostgresColumns) async throws -> Int {
        try await result(PostgresQuery(unsafeSQL: sql, binds: columns.bindings)).metadata.rows ?? 0
    }

    /// ``execute(_:_:)-(String,PostgresColumns)``, for the rows the statement returns.
    func rows(_ sql: String, _ columns: PostgresColumns) async throws -> [SQLRow] {
        var rows: [SQLRow] = []
        try each(try await result(PostgresQuery(unsafeSQL: sql, binds: columns.bindings))) { rows.append($0) }
        return rows
    }

    private func result(_ sql: String, _ arguments: [SQLValue]) async throws -> PostgresQueryResult {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument {
            case .null: bindings.appendNull()
            case .integer(let value): bindings.append(value)
            case .double(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .bool(let value): bindings.append(value)
            case .blob(let value): bindings.append(ByteBuffer(bytes: value))
            }
        }
        return try await result(PostgresQuery(unsafeSQL: Self.numberingPlaceholders(sql), binds: bindings))
    }

    private func result(_ query: PostgresQuery) async throws -> PostgresQueryResult {
        do {
            return try await answerWatchingTheConnection(connection.query(query, logger: PostgresBackend.logger))
        } catch let error as PSQLError where error.serverInfo?[.message] != nil {
            // postgres-nio hides the server's words from `description`; they are what a user needs.
            throw PostgresStatementError(
                message: error.serverInfo?[.message] ?? "", sqlState: error.serverInfo?[.sqlState] ?? "",
                underlying: error)
        }
    }

    /// The statement's answer. A statement sent as the server goes away (a restart cuts every
    /// connection) may never be answered nor failed by the driver; rather than hold the
    /// request forever, the connection's closing ends the wait (``ConnectionLoss``).
    private func answerWatchingTheConnection<T: Sendable>(_ answer: EventLoopFuture<T>) async throws -> T {
        let loss = self.loss
        return try await withCheckedThrowingContinuation { continuation in
            let pending = PendingAnswer(continuation)
            loss.watch(pending)
            answer.whenComplete { result in
                loss.unwatch(pending)
                pending.resume(with: result)
            }
        }
    }

    /// The SQL with its `?` placeholders numbered (`$1`, `$2`, ...), quoted text left alone.
    static func numberingPlaceholders(_ sql: String) -> String {
        guard sql.contains("?") else { return sql }
        var result = ""
        result.reserveCapacity(sql.utf8.count + 16)
        var number = 0
        var quoted = false
        for character in sql {
            if character == "'" { quoted.toggle() }
            if character == "?", !quoted {
                number += 1
                result += "$\(number)"
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// A column's value as the store reads it: the schema's types only.
    private static func value(_ cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8, .oid: return .integer(try cell.decode(Int64.self))
        case .float4, .float8, .numeric: return .double(try cell.decode(Double.self))
        case .bool: return .bool(try cell.decode(Bool.self))
        case .bytea: return .blob(Array(buffer: try cell.decode(ByteBuffer.self)))
        default: return .text(try cell.decode(String.self))
        }
    }
}

/// PostgreSQL's side of the differences: several writers at once, so locks.
struct PostgresDialect: SQLDialect {
    func jsonText(_ column: String, _ key: String) -> String {
        "(\(column)::jsonb ->> '\(key)')"
    }

    var groupMembers: String {
        "SELECT device FROM roster WHERE groups::jsonb @> jsonb_build_array(?::text)"
    }

    func lock(_ key: String, in transaction: any SQLTransaction) async throws {
        try await transaction.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "fencepost:" + key)
    }

    /// One round trip for many locks: taken one after another in the rows' order (volatile
    /// functions of the select list are evaluated after the sort).
    func lock(_ keys: [String], in transaction: any SQLTransaction) async throws {
        for chunk in stride(from: 0, to: keys.count, by: 1_000).map({ keys[$0..<min($0 + 1_000, keys.count)] }) {
            let rows = chunk.indices.map { "(?, \($0))" }.joined(separator: ", ")
            try await transaction.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(key, 0)) FROM (VALUES \(rows)) AS wanted(key, position) ORDER BY position",
                chunk.map { .text("fencepost:" + $0) })
        }
    }

    func tryLock(_ key: String, in transaction: any SQLTransaction) async throws -> Bool {
        try await transaction.value("SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))", "fencepost:" + key)
            ?? false
    }
}

/// A statement the server refused, with its reason and SQLSTATE (a constraint, a trigger, a
/// cancelled query).
struct PostgresStatementError: Error, CustomStringConvertible {
    var message: String
    var sqlState: String
    var underlying: PSQLError

    var description: String { "PostgreSQL: \(message)" + (sqlState.isEmpty ? "" : " (SQLSTATE \(sqlState))") }

    /// The server is shutting down or restarting, out of connections, or cannot be reached
    /// (classes 57P, 53 and 08): the operation may succeed when tried again later.
    var meansUnavailable: Bool {
        sqlState.hasPrefix("57P") || sqlState.hasPrefix("53") || sqlState.hasPrefix("08")
    }
}

/// A statement's answer awaited: resumed once, by the answer or by the connection's loss,
/// whichever comes first.
final class PendingAnswer<T: Sendable>: Sendable, ConnectionLoss.Waiter {
    private let continuation: Mutex<CheckedContinuation<T, any Error>?>

    init(_ continuation: CheckedContinuation<T, any Error>) {
        self.continuation = Mutex(continuation)
    }

    func resume(with result: Result<T, any Error>) {
        continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }?.resume(with: result)
    }

    func connectionLost() {
        resume(with: .failure(StoreUnavailable(reason: "the connection to PostgreSQL was lost while a statement ran")))
    }
}
