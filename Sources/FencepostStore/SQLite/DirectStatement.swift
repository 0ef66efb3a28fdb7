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
        Self.bind(text: value, at: index, to: handle)
    }

    func bind(_ index: Int32, _ value: String?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }

    func bind(_ index: Int32, _ value: [UInt8]) {
        Self.bind(bytes: value, at: index, to: handle)
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
        Self.error(code, connection: connection, sql: sql)
    }
}

/// Binding values and reporting errors through SQLite's C API, for ``DirectStatement`` and
/// ``GRDBTransaction``'s reads.
extension DirectStatement {
    /// Binds `value` to parameter `index` (from 1).
    @discardableResult
    static func bind(_ value: SQLValue, at index: Int32, to handle: SQLiteStatement) -> Int32 {
        switch value {
        case .null: sqlite3_bind_null(handle, index)
        case .integer(let integer): sqlite3_bind_int64(handle, index, integer)
        case .double(let double): sqlite3_bind_double(handle, index, double)
        case .bool(let bool): sqlite3_bind_int64(handle, index, bool ? 1 : 0)
        case .text(let text): bind(text: text, at: index, to: handle)
        case .blob(let bytes): bind(bytes: bytes, at: index, to: handle)
        }
    }

    @discardableResult
    static func bind(text: String, at index: Int32, to handle: SQLiteStatement) -> Int32 {
        var text = text
        return text.withUTF8 { utf8 in
            // An empty buffer may have no address, which SQLite would bind as NULL.
            guard let base = utf8.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, transient) }
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                sqlite3_bind_text(handle, index, $0, Int32(utf8.count), transient)
            }
        }
    }

    @discardableResult
    static func bind(bytes: [UInt8], at index: Int32, to handle: SQLiteStatement) -> Int32 {
        bytes.withUnsafeBytes { bytes in
            // An empty buffer may have no address, which SQLite would bind as NULL.
            sqlite3_bind_blob(
                handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), transient)
        }
    }

    /// The error SQLite reports for a call that returned `code`.
    static func error(_ code: Int32, connection: SQLiteConnection?, sql: String) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }

    /// SQLite copies bound text and bytes before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}
