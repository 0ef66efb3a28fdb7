import Foundation
import GRDB

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

    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        try db.cachedStatement(sql: sql).execute(arguments: Self.arguments(arguments))
        return db.changesCount
    }

    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        var rows: [SQLRow] = []
        try forEachRow(sql, arguments) { rows.append($0) }
        return rows
    }

    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (SQLRow) throws -> Void) throws {
        let statement = try db.cachedStatement(sql: sql)
        let columns = self.columns[sql] ?? SQLColumns(statement.columnNames)
        self.columns[sql] = columns
        let cursor = try Row.fetchCursor(statement, arguments: Self.arguments(arguments))
        while let row = try cursor.next() {
            try body(SQLRow(columns: columns, values: row.databaseValues.map(Self.value)))
        }
    }

    /// Inserted at once: SQLite has one writer, so rows commit in `seq` order anyway.
    func enqueue(_ row: OutboxRow) throws {
        try execute(OutboxRow.insert, row.values)
    }

    func eventWriter(now: String) throws -> any EventWriting {
        try SQLiteEventWriter(now: now, db: db)
    }

    private static func arguments(_ values: [SQLValue]) -> StatementArguments {
        StatementArguments(
            values.map { value -> DatabaseValue in
                switch value {
                case .null: return .null
                case .integer(let integer): return integer.databaseValue
                case .double(let double): return double.databaseValue
                case .text(let text): return text.databaseValue
                case .bool(let bool): return (bool ? 1 : 0).databaseValue
                case .blob(let bytes): return Data(bytes).databaseValue
                }
            })
    }

    private static func value(_ value: DatabaseValue) -> SQLValue {
        switch value.storage {
        case .null: return .null
        case .int64(let integer): return .integer(integer)
        case .double(let double): return .double(double)
        case .string(let text): return .text(text)
        case .blob(let data): return .blob([UInt8](data))
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
