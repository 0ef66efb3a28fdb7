import NIOCore
import PostgresNIO

/// Rows bound column by column, each column one array: a statement over
/// `unnest($1::text[], $2::bigint[], ...)` writes thousands of rows with a bind per column,
/// where a multi-row `VALUES` list needs one per value (and PostgreSQL parses and plans each of
/// them). The arrays go in PostgreSQL's binary format, so no value is ever quoted or escaped.
struct PostgresColumns {
    private(set) var bindings = PostgresBindings()

    /// The next column: `$n` of the statement, in the order the columns are appended.
    mutating func append(_ values: [String?]) { bindings.append(NullableArray(values)) }
    mutating func append(_ values: [Int64?]) { bindings.append(NullableArray(values)) }
    mutating func append(_ values: [Double?]) { bindings.append(NullableArray(values)) }
    mutating func append(_ values: [String]) { bindings.append(values) }
    mutating func append(_ values: [Int64]) { bindings.append(values) }

    /// A value for every row (`$n` used as it is, not unnested).
    mutating func append(_ value: String) { bindings.append(value) }
    mutating func append(_ value: Int64) { bindings.append(value) }
}

/// A one-dimensional array whose elements may be NULL, in the binary format (postgres-nio's
/// own arrays have no NULL elements).
private struct NullableArray<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable>:
    PostgresNonThrowingEncodable
{
    var elements: [Element?]

    init(_ elements: [Element?]) { self.elements = elements }

    static var psqlType: PostgresDataType { Element.psqlArrayType }
    static var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        // Dimensions, whether any element is NULL, the elements' type.
        buffer.writeInteger(elements.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(elements.contains { $0 == nil } ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard !elements.isEmpty else { return }
        // The dimension's length and lower bound.
        buffer.writeInteger(Int32(elements.count))
        buffer.writeInteger(1, as: Int32.self)
        for element in elements {
            guard let element else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            let lengthAt = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            element.encode(into: &buffer, context: context)
            buffer.setInteger(Int32(buffer.writerIndex - lengthAt - 4), at: lengthAt)
        }
    }
}
