import Foundation
import GRDB
import GRDBSQLite

/// The store's SQL on a SQLite connection (through GRDB), inside one of its transactions.
/// Its methods are synchronous (SQLite's calls, on the connection's thread), which the
/// protocol's async requirements accept: on SQLite the store's SQL never suspends.
final class GRDBTransaction: SQLTransaction {
    let db: Database
    let dialect: any SQLDialect = SQLiteDialect()
    /// Column lists by statement text: a statement's columns are worked out once.
    private var columns: [String: SQLColumns] = [:]

    init(_ db: Database) {
        self.db = db
    }

    /// Bound and stepped through SQLite's C API, as ``forEachRow(_:_:_:)`` is: GRDB's arguments
    /// (each value boxed and converted through key paths) were two fifths of the writer's time
    /// in a region apply, one insert and one outbox row per region.
    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        let statement = try db.cachedStatement(sql: sql)
        let handle = try bound(statement, sql: sql, arguments)
        defer { unbind(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return Int(sqlite3_changes(db.sqliteConnection)) }
            guard code == SQLITE_ROW else { throw error(code, sql: sql) }
        }
    }

    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        var rows: [SQLRow] = []
        try forEachRow(sql, arguments) { rows.append($0) }
        return rows
    }

    /// The statement is bound and stepped through SQLite's C API, its values read straight
    /// from SQLite's columns into the row: GRDB's arguments and cursor (each value boxed,
    /// converted and checked) cost more than SQLite's own work for a scan of a million regions,
    /// and for the live writer's one statement saving every device of a group (five values a
    /// device). As for ``DirectStatement``, only SQLite's functions touch the statement.
    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (SQLRow) throws -> Void) throws {
        let statement = try db.cachedStatement(sql: sql)
        let columns: SQLColumns
        if let known = self.columns[sql] {
            columns = known
        } else {
            columns = SQLColumns(statement.columnNames)
            self.columns[sql] = columns
        }
        let handle = try bound(statement, sql: sql, arguments)
        defer { unbind(handle) }
        let count = sqlite3_column_count(handle)
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw error(code, sql: sql) }
            var values: [SQLValue] = []
            values.reserveCapacity(Int(count))
            for column in 0..<count { values.append(Self.value(handle, column)) }
            try body(SQLRow(columns: columns, values: values))
        }
    }

    /// The statement's handle, reset and bound to `arguments`; ``unbind(_:)`` when done.
    private func bound(_ statement: Statement, sql: String, _ arguments: [SQLValue]) throws -> SQLiteStatement {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        guard Int(sqlite3_bind_parameter_count(handle)) == arguments.count else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE,
                message: "wrong number of statement arguments: \(arguments.count) for "
                    + "\(sqlite3_bind_parameter_count(handle)) parameters", sql: sql)
        }
        for (offset, value) in arguments.enumerated() {
            let code = DirectStatement.bind(value, at: Int32(offset + 1), to: handle)
            guard code == SQLITE_OK else {
                unbind(handle)
                throw error(code, sql: sql)
            }
        }
        return handle
    }

    private func unbind(_ handle: SQLiteStatement) {
        sqlite3_reset(handle)
        // Nothing bound here is left for GRDB's next use of the statement to find.
        sqlite3_clear_bindings(handle)
    }

    private func error(_ code: Int32, sql: String) -> DatabaseError {
        DirectStatement.error(code, connection: db.sqliteConnection, sql: sql)
    }

    /// Inserted at once: SQLite has one writer, so rows commit in `seq` order anyway.
    func enqueue(_ row: OutboxRow) throws {
        try execute(OutboxRow.insert, row.values)
    }

    func eventWriter(now: String) throws -> any EventWriting {
        try SQLiteEventWriter(now: now, db: db)
    }

    /// The current row's value in `column`, as SQLite stores it.
    private static func value(_ handle: SQLiteStatement, _ column: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .double(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            // `sqlite3_column_bytes` after `_text`, the order SQLite documents for the length.
            guard let text = sqlite3_column_text(handle, column) else { return .text("") }
            let length = Int(sqlite3_column_bytes(handle, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self))
        case SQLITE_BLOB:
            let length = Int(sqlite3_column_bytes(handle, column))
            guard length > 0, let bytes = sqlite3_column_blob(handle, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: length)))
        default: return .null
        }
    }
}

/// SQLite's side of the differences: one writer at a time, so no locks.
struct SQLiteDialect: SQLDialect {
    func jsonText(_ column: String, _ key: String) -> String {
        "json_extract(\(column), '$.\(key)')"
    }

    var groupMembers: String {
        "SELECT roster.device FROM roster, json_each(roster.groups) AS member_of WHERE member_of.value = ?"
    }

    func lock(_ key: String, in transaction: any SQLTransaction) throws {}

    func lock(_ keys: [String], in transaction: any SQLTransaction) throws {}

    func tryLock(_ key: String, in transaction: any SQLTransaction) throws -> Bool { true }
}
