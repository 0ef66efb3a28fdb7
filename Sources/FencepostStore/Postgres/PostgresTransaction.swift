import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The store's SQL on a PostgreSQL connection, inside one of its transactions, on a store
/// thread: each statement is sent with its values bound (`?` placeholders become `$1`, `$2`,
/// ...) and waited for.
final class PostgresTransaction: SQLTransaction {
    let connection: PostgresConnection
    let dialect: any SQLDialect = PostgresDialect()

    init(_ connection: PostgresConnection) {
        self.connection = connection
    }

    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        try result(sql, arguments).metadata.rows ?? 0
    }

    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        var rows: [SQLRow] = []
        try each(try result(sql, arguments)) { rows.append($0) }
        return rows
    }

    /// Through a cursor, `fetchSize` rows at a time: an export of millions of rows holds one
    /// page in memory, not the whole answer.
    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (SQLRow) throws -> Void) throws {
        cursors += 1
        let cursor = "fencepost_rows_\(cursors)"
        try execute("DECLARE \(cursor) NO SCROLL CURSOR FOR " + sql, arguments)
        while true {
            let page = try result("FETCH \(Self.fetchSize) FROM \(cursor)", [])
            try each(page, body)
            if (page.metadata.rows ?? 0) < Self.fetchSize { break }
        }
        try execute("CLOSE \(cursor)", [])
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

    func eventWriter(now: String) throws -> any EventWriting {
        PostgresEventWriter(now: now, transaction: self)
    }

    private func result(_ sql: String, _ arguments: [SQLValue]) throws -> PostgresQueryResult {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument {
            case .null: bindings.appendNull()
            case .integer(let value): bindings.append(value)
            case .double(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .bool(let value): bindings.append(value)
            }
        }
        let query = PostgresQuery(unsafeSQL: Self.numberingPlaceholders(sql), binds: bindings)
        do {
            return try connection.query(query, logger: PostgresBackend.logger).wait()
        } catch let error as PSQLError where error.serverInfo?[.message] != nil {
            // postgres-nio hides the server's words from `description`; they are what a user needs.
            throw PostgresStatementError(
                message: error.serverInfo?[.message] ?? "", sqlState: error.serverInfo?[.sqlState] ?? "", underlying: error)
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
        default: return .text(try cell.decode(String.self))
        }
    }
}

/// PostgreSQL's side of the differences: several writers at once, so locks and settling.
struct PostgresDialect: SQLDialect {
    func jsonText(_ column: String, _ key: String) -> String {
        "(\(column)::jsonb ->> '\(key)')"
    }

    /// Outbox rows of transactions older than every transaction still running: a transaction
    /// that took a lower seq and commits later is waited for rather than skipped.
    var settledOutboxRow: String { "AND o.txid < pg_snapshot_xmin(pg_current_snapshot())" }

    func lock(_ key: String, in transaction: any SQLTransaction) throws {
        try transaction.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "fencepost:" + key)
    }
}

/// A statement the server refused, with its reason and SQLSTATE (a constraint, a trigger, a
/// cancelled query).
struct PostgresStatementError: Error, CustomStringConvertible {
    var message: String
    var sqlState: String
    var underlying: PSQLError

    var description: String { "PostgreSQL: \(message) (SQLSTATE \(sqlState))" }

    /// The server is shutting down or restarting, out of connections, or cannot be reached
    /// (classes 57P, 53 and 08): the operation may succeed when tried again later.
    var meansUnavailable: Bool {
        sqlState.hasPrefix("57P") || sqlState.hasPrefix("53") || sqlState.hasPrefix("08")
    }
}
