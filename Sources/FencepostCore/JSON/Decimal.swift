/// Decimal number parsing straight from UTF-8 bytes, exact: the common short numbers take
/// Clinger's fast path (at most 15 significant digits and a power of ten of at most 22 are
/// both exact doubles, so one multiplication or division rounds correctly); others go through
/// the standard library's parser.
public enum DecimalParser {
    /// The number the bytes spell (JSON number syntax, plus a leading `+`), or nil.
    public static func parse(_ bytes: ArraySlice<UInt8>) -> Double? {
        bytes.withUnsafeBufferPointer { parse($0) }
    }

    /// The number the bytes spell (JSON number syntax, plus a leading `+`), or nil.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var index = bytes.startIndex
        let end = bytes.endIndex
        guard index != end else { return nil }
        var negative = false
        if bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
            negative = bytes[index] == UInt8(ascii: "-")
            index = bytes.index(after: index)
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var scale = 0
        var sawDigit = false
        while index != end, let digit = digitValue(bytes[index]) {
            accumulate(digit, into: &mantissa, digits: &digits)
            sawDigit = true
            index = bytes.index(after: index)
        }
        if index != end, bytes[index] == UInt8(ascii: ".") {
            index = bytes.index(after: index)
            while index != end, let digit = digitValue(bytes[index]) {
                accumulate(digit, into: &mantissa, digits: &digits)
                scale -= 1
                sawDigit = true
                index = bytes.index(after: index)
            }
        }
        guard sawDigit else { return nil }
        var exponent = 0
        if index != end, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index = bytes.index(after: index)
            var exponentNegative = false
            if index != end, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index = bytes.index(after: index)
            }
            var sawExponentDigit = false
            while index != end, let digit = digitValue(bytes[index]) {
                if exponent < 100_000 { exponent = exponent * 10 + Int(digit) }
                sawExponentDigit = true
                index = bytes.index(after: index)
            }
            guard sawExponentDigit else { return nil }
            if exponentNegative { exponent = -exponent }
        }
        guard index == end else { return nil }
        let power = scale + exponent
        if digits <= 15, (-22...22).contains(power) {
            let magnitude = power < 0 ? Double(mantissa) / powersOfTen[-power] : Double(mantissa) * powersOfTen[power]
            return negative ? -magnitude : magnitude
        }
        return Double(String(decoding: bytes, as: UTF8.self))
    }

    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    @inline(__always)
    private static func digitValue(_ byte: UInt8) -> UInt8? {
        let value = byte &- UInt8(ascii: "0")
        return value < 10 ? value : nil
    }

    /// Adds one digit; leading zeros are not significant digits.
    @inline(__always)
    private static func accumulate(_ digit: UInt8, into mantissa: inout UInt64, digits: inout Int) {
        if digits < 19 {
            mantissa = mantissa &* 10 &+ UInt64(digit)
            if mantissa != 0 { digits += 1 }
        } else {
            digits += 1  // beyond the fast path: the slow path parses the text
        }
    }
}
