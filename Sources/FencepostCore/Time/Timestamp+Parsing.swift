extension Timestamp {
    /// Parses ISO 8601 / RFC 3339 date-times into seconds since the epoch:
    /// `2019-02-18T07:45:50Z`, `2019-02-18T07:45:50.123+01:00`, `2019-06-11 15:00:00 -0700`
    /// (Apple Health), `2008-10-23 02:53:04` (no offset: UTC). Nil when the text is not one.
    public static func parse(_ text: Substring) -> Double? {
        var text = text
        return text.withUTF8 { parse(utf8: $0) }
    }

    /// Parses the UTF-8 bytes of a date-time (see ``parse(_:)-(Substring)``).
    public static func parse(utf8 bytes: ArraySlice<UInt8>) -> Double? {
        bytes.withUnsafeBufferPointer { parse(utf8: $0) }
    }

    /// Parses the UTF-8 bytes of a date-time (see ``parse(_:)-(Substring)``).
    @inline(__always)
    public static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        parseNotingZone(utf8: bytes)?.seconds
    }

    /// Parses the UTF-8 bytes of a date-time, and tells whether it named its zone (`Z` or an
    /// offset): `seconds` takes a time without one as UTC, which a reader told the zone of such
    /// times corrects (``LocalTimeZone``).
    public static func parseNotingZone(utf8 bytes: UnsafeBufferPointer<UInt8>) -> (seconds: Double, zoned: Bool)? {
        var memo = DateMemo()
        return parseNotingZone(utf8: bytes, memo: &memo)
    }

    /// ``parseNotingZone(utf8:)`` for a run of times that mostly share their date (a trace's):
    /// a date the same as the last one's, byte for byte, is taken from `memo`, neither read
    /// nor worked out again. The same results, to the bit.
    public static func parseNotingZone(utf8 bytes: UnsafeBufferPointer<UInt8>, memo: inout DateMemo) -> (
        seconds: Double, zoned: Bool
    )? {
        var scanner = DigitScanner(bytes)
        let days: Int
        if let remembered = memo.days(of: bytes) {
            days = remembered
            scanner.index += DateMemo.length
        } else {
            guard let year = scanner.number(digits: 4), scanner.skip("-"),
                let month = scanner.number(digits: 2), scanner.skip("-"),
                let day = scanner.number(digits: 2),
                (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
            else { return nil }
            days = daysSinceEpoch(year: year, month: month, day: day)
            memo.remember(days, of: bytes)
        }
        var seconds = Double(days) * 86_400
        guard scanner.skip("T") || scanner.skip("t") || scanner.skip(" ") else {
            return scanner.atEnd ? (seconds, false) : nil  // a date alone is its midnight
        }
        guard let hour = scanner.number(digits: 2), scanner.skip(":"), let minute = scanner.number(digits: 2),
            hour <= 24, minute <= 59, hour < 24 || minute == 0
        else { return nil }
        seconds += Double(hour * 3600 + minute * 60)
        if scanner.skip(":") {
            // 24:00:00 is the end of the day; 24:00:01 is no time at all.
            guard let second = scanner.number(digits: 2), second <= 60, hour < 24 || second == 0 else { return nil }
            seconds += Double(second)
            if scanner.skip(".") || scanner.skip(",") {
                guard let fraction = scanner.fraction() else { return nil }
                seconds += fraction
            }
        }
        _ = scanner.skip(" ")
        if scanner.atEnd { return (seconds, false) }
        if scanner.skip("Z") || scanner.skip("z") {
            return scanner.atEnd ? (seconds, true) : nil
        }
        let sign: Double
        if scanner.skip("+") { sign = 1 } else if scanner.skip("-") { sign = -1 } else { return nil }
        guard let offsetHours = scanner.number(digits: 2) else { return nil }
        _ = scanner.skip(":")
        let offsetMinutes = scanner.number(digits: 2) ?? 0
        guard scanner.atEnd, offsetHours <= 23, offsetMinutes <= 59 else { return nil }
        return (seconds - sign * Double(offsetHours * 3600 + offsetMinutes * 60), true)
    }

    public static func parse(_ text: String) -> Double? {
        parse(Substring(text))
    }

    /// The days in a month of the proleptic Gregorian calendar: a 30 February is no date.
    package static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the given proleptic Gregorian date.
    package static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        // Howard Hinnant's days-from-civil algorithm.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// The date (`YYYY-MM-DD`, its 10 bytes) the last time parsed began with, and its day number.
public struct DateMemo: Sendable {
    /// The bytes of a date.
    static let length = 10
    private var first: UInt64 = 0
    private var last: UInt16 = 0
    private var days: Int?

    public init() {}

    /// The day number of the date `bytes` begin with, when it is the one remembered.
    @inline(__always)
    func days(of bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let days, bytes.count >= Self.length, let base = bytes.baseAddress else { return nil }
        let raw = UnsafeRawPointer(base)
        guard raw.loadUnaligned(as: UInt64.self) == first,
            raw.loadUnaligned(fromByteOffset: 8, as: UInt16.self) == last
        else { return nil }
        return days
    }

    /// Remembers the date `bytes` begin with (a valid one, just read: its 10 bytes).
    mutating func remember(_ days: Int, of bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count >= Self.length, let base = bytes.baseAddress else { return }
        let raw = UnsafeRawPointer(base)
        first = raw.loadUnaligned(as: UInt64.self)
        last = raw.loadUnaligned(fromByteOffset: 8, as: UInt16.self)
        self.days = days
    }
}

/// Reads fixed-width decimal fields from UTF-8 text.
private struct DigitScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    var atEnd: Bool { index == bytes.endIndex }

    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard index != bytes.endIndex, bytes[index] == UInt8(ascii: character) else { return false }
        index = bytes.index(after: index)
        return true
    }

    mutating func number(digits: Int) -> Int? {
        var value = 0
        for _ in 0..<digits {
            guard index != bytes.endIndex else { return nil }
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            index = bytes.index(after: index)
        }
        return value
    }

    /// Decimal digits after the point, as one division so `.350` is exactly 350 / 1000.
    mutating func fraction() -> Double? {
        var digits: UInt64 = 0
        var scale: Double = 1
        var any = false
        while index != bytes.endIndex, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            if scale < 1e15 {  // beyond femtoseconds nothing is representable anyway
                digits = digits * 10 + UInt64(bytes[index] - UInt8(ascii: "0"))
                scale *= 10
            }
            any = true
            index = bytes.index(after: index)
        }
        return any ? Double(digits) / scale : nil
    }
}
