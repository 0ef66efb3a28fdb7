/// Decimal number parsing straight from UTF-8 bytes, exact: the common short numbers take
/// Clinger's fast path (a mantissa of at most 15 digits and a power of ten of at most 22 are
/// both exact doubles, so one multiplication or division rounds correctly); others, longer
/// numbers among them, go through the standard library's parser.
public enum DecimalParser {
    /// The number the bytes spell (JSON number syntax, plus a leading `+`), or nil.
    public static func parse(_ bytes: ArraySlice<UInt8>) -> Double? {
        bytes.withUnsafeBufferPointer { parse($0) }
    }

    /// The number the bytes spell (JSON number syntax, plus a leading `+`), or nil.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return nil }
        let end = bytes.count
        var index = 0
        let negative = base[0] == UInt8(ascii: "-")
        if negative || base[0] == UInt8(ascii: "+") { index = 1 }
        // Every digit goes into the mantissa; it is used only when there are at most 15 of them.
        var mantissa: UInt64 = 0
        let integerStart = index
        digitsInto(&mantissa, base, &index, end)
        var digits = index - integerStart
        var fractionDigits = 0
        if index != end, base[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            digitsInto(&mantissa, base, &index, end)
            fractionDigits = index - fractionStart
            digits += fractionDigits
        }
        guard digits > 0 else { return nil }
        var exponent = 0
        if index != end, base[index] == UInt8(ascii: "e") || base[index] == UInt8(ascii: "E") {
            index += 1
            var exponentNegative = false
            if index != end, base[index] == UInt8(ascii: "+") || base[index] == UInt8(ascii: "-") {
                exponentNegative = base[index] == UInt8(ascii: "-")
                index += 1
            }
            let exponentStart = index
            while index != end, base[index] &- UInt8(ascii: "0") < 10 {
                if exponent < 100_000 { exponent = exponent * 10 + Int(base[index] &- UInt8(ascii: "0")) }
                index += 1
            }
            guard index != exponentStart else { return nil }
            if exponentNegative { exponent = -exponent }
        }
        guard index == end else { return nil }
        let power = exponent - fractionDigits
        if digits <= 15, (-22...22).contains(power) {
            let magnitude = power < 0 ? Double(mantissa) / powersOfTen[-power] : Double(mantissa) * powersOfTen[power]
            return negative ? -magnitude : magnitude
        }
        return Double(String(decoding: bytes, as: UTF8.self))
    }

    /// Reads decimal digits from `index` on into the mantissa (wrapping past 19 of them, when
    /// it is not used), leaving `index` at the first byte that is not a digit.
    @inline(__always)
    private static func digitsInto(
        _ mantissa: inout UInt64, _ base: UnsafePointer<UInt8>, _ index: inout Int, _ end: Int
    ) {
        while index != end {
            let digit = base[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return }
            mantissa = mantissa &* 10 &+ UInt64(digit)
            index &+= 1
        }
    }

    /// Written out, so that the table is laid down with the program, not made on first use.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
        1e19, 1e20, 1e21, 1e22,
    ]
}
