import GRDB
import GRDBSQLite

/// One of the connection's cached statements, bound, stepped and read through SQLite's C API.
///
/// For the writes an ingest repeats for every event (the event, its visit change, their outbox
/// rows): binding each value through GRDB's `StatementArguments` (boxed, converted, checked)
/// cost about as much as SQLite's own work for those rows. Everything else uses GRDB as usual.
/// Every parameter must be bound before `execute`. After `init` only SQLite's C functions are
/// called, on the statement's and the connection's handles (GRDB's `Database` is not touched:
/// it belongs to the thread that opened the transaction), so a statement may run on another
/// thread while the connection has no other user; ``IngestTransaction`` is what ensures that.
struct DirectStatement {
    /// Kept so the handle lives as long as this value.
    private let statement: Statement
    private let handle: SQLiteStatement
    private let connection: SQLiteConnection?
    private let sql: String

    init(_ sql: String, db: Database) throws {
        self.sql = sql
        statement = try db.cachedStatement(sql: sql)
        handle = statement.sqliteStatement
        connection = db.sqliteConnection
        sqlite3_reset(handle)
    }

    func bind(_ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            // An empty buffer may have no address, which SQLite would bind as NULL.
            if let base = utf8.baseAddress {
                base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                    _ = sqlite3_bind_text(handle, index, $0, Int32(utf8.count), Self.transient)
                }
            } else {
                _ = sqlite3_bind_text(handle, index, "", 0, Self.transient)
            }
        }
    }

    func bind(_ index: Int32, _ value: String?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }

    func bind(_ index: Int32, _ value: [UInt8]) {
        value.withUnsafeBytes { bytes in
            // An empty buffer may have no address, which SQLite would bind as NULL.
            _ = sqlite3_bind_blob(
                handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), Self.transient)
        }
    }

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ index: Int32, _ value: Double?) {
        if let value { sqlite3_bind_double(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    /// Runs the statement to its end; returns how many rows it changed.
    @discardableResult
    func execute() throws -> Int {
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else { throw error(code) }
        return Int(sqlite3_changes(connection))
    }

    /// Runs a statement that returns at most one row (`RETURNING`, a lookup) and reads it.
    func fetchOne<Value>(_ read: (Columns) -> Value) throws -> Value? {
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        if code == SQLITE_DONE { return nil }
        guard code == SQLITE_ROW else { throw error(code) }
        return read(Columns(handle: handle))
    }

    /// The current row's columns, by position.
    struct Columns {
        fileprivate let handle: SQLiteStatement

        func text(_ index: Int32) -> String? {
            guard let text = sqlite3_column_text(handle, index) else { return nil }
            return String(cString: text)
        }

        func bytes(_ index: Int32) -> [UInt8] {
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let base = sqlite3_column_blob(handle, index) else { return [] }
            return Array(UnsafeRawBufferPointer(start: base, count: count))
        }

        func int64(_ index: Int32) -> Int64? {
            sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, index)
        }
    }

    private func error(_ code: Int32) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }

    /// SQLite copies bound text before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}
