/// A value bound to or read from SQL, the same for both backends: SQLite's storage classes, and
/// the PostgreSQL types Fencepost's schema uses (bigint, double precision, text, boolean, bytea).
package enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case double(Double)
    case text(String)
    case bool(Bool)
    /// Bytes: SQLite's BLOB, PostgreSQL's bytea (the stored fixes' encoded chunks).
    case blob([UInt8])
}

/// A Swift value that binds as a ``SQLValue`` and reads back from one.
package protocol SQLValueConvertible {
    var sqlValue: SQLValue { get }
    /// The value read from a column; nil when the column holds another type (or NULL).
    init?(sqlValue: SQLValue)
}

extension String: SQLValueConvertible {
    package var sqlValue: SQLValue { .text(self) }
    /// A BLOB SQLite holds in a text column reads as its UTF-8 text, as it always has.
    package init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .text(let text): self = text
        case .blob(let bytes): self = String(decoding: bytes, as: UTF8.self)
        default: return nil
        }
    }
}

extension [UInt8]: SQLValueConvertible {
    package var sqlValue: SQLValue { .blob(self) }
    package init?(sqlValue: SQLValue) {
        guard case .blob(let bytes) = sqlValue else { return nil }
        self = bytes
    }
}

extension Int64: SQLValueConvertible {
    package var sqlValue: SQLValue { .integer(self) }
    package init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .integer(let value): self = value
        case .double(let value) where value == value.rounded() && abs(value) < 9.0e18: self = Int64(value)
        case .bool(let value): self = value ? 1 : 0
        default: return nil
        }
    }
}

extension Int: SQLValueConvertible {
    package var sqlValue: SQLValue { .integer(Int64(self)) }
    package init?(sqlValue: SQLValue) {
        guard let value = Int64(sqlValue: sqlValue) else { return nil }
        self = Int(value)
    }
}

extension Double: SQLValueConvertible {
    package var sqlValue: SQLValue { .double(self) }
    package init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .double(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
}

extension Bool: SQLValueConvertible {
    package var sqlValue: SQLValue { .bool(self) }
    /// SQLite keeps booleans as 0 and 1.
    package init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .bool(let value): self = value
        case .integer(let value): self = value != 0
        default: return nil
        }
    }
}

extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    /// A `switch`, not `map(\.sqlValue)`: the key path was built at run time on every call (a
    /// tenth of a million-region apply's writing).
    package var sqlValue: SQLValue {
        switch self {
        case .some(let value): return value.sqlValue
        case .none: return .null
        }
    }
    /// NULL reads as nil (and so does a value of another type, which the schema rules out).
    package init?(sqlValue: SQLValue) {
        self = sqlValue == .null ? .none : Wrapped(sqlValue: sqlValue)
    }
}

/// One row of a result: its values by position, found by column name through the statement's
/// column list (shared by every row of a result).
package struct SQLRow: Sendable {
    let columns: SQLColumns
    package let values: [SQLValue]

    /// The named column's value; a missing column or an unexpected type is a programmer error.
    package subscript<Value: SQLValueConvertible>(_ name: String) -> Value {
        guard let index = columns.position(of: name) else {
            preconditionFailure("no column \(name) in \(columns.names)")
        }
        guard let value = Value(sqlValue: values[index]) else {
            preconditionFailure("column \(name) holds \(values[index]), not \(Value.self)")
        }
        return value
    }

    /// The first column's value.
    package func first<Value: SQLValueConvertible>(_: Value.Type = Value.self) -> Value? {
        values.first.flatMap(Value.init(sqlValue:))
    }
}

/// A result's column names, looked up once per statement.
package final class SQLColumns: Sendable {
    let names: [String]
    let index: [String: Int]

    init(_ names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() where index[name] == nil { index[name] = position }
        self.index = index
    }

    /// The first column named `name`. A handful of names is searched in order: short names
    /// compare as two machine words, cheaper than hashing one (this runs for every value read).
    func position(of name: String) -> Int? {
        names.count <= 8 ? names.firstIndex(of: name) : index[name]
    }
}
