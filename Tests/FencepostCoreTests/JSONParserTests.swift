import FencepostCore
import Foundation
import Testing

@Suite struct JSONParserTests {
    func parse(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Data(text.utf8))
    }

    @Test func parsesEveryKindOfValue() throws {
        let value = try parse(#" {"a": [1, -2.5e3, true, false, null], "b": {"c": "x\"y\\z\u00e9\ud83d\ude00"}} "#)
        #expect(
            value
                == .object([
                    "a": .array([.number(1), .number(-2500), .bool(true), .bool(false), .null]),
                    "b": .object(["c": .string("x\"y\\zé😀")]),
                ]))
    }

    @Test(arguments: [
        ("{\n  \"a\": 1,,\n}", 2, 10, "unexpected character ','"),
        ("[1, 2", 1, 6, "unexpected end of input inside an array"),
        ("{\"é\": x}", 1, 7, "unexpected character 'x'"),
        ("[01]", 1, 3, "leading zero"),
        ("{\"a\" 1}", 1, 6, "expected ':'"),
        ("[1] 2", 1, 5, "unexpected text after the JSON value"),
        ("\"abc", 1, 5, "unterminated string"),
        ("[tru]", 1, 2, "invalid literal"),
        ("", 1, 1, "unexpected end of input"),
    ])
    func reportsLineColumnAndReason(text: String, line: Int, column: Int, reason: String) {
        #expect {
            try parse(text)
        } throws: { error in
            guard let error = error as? JSONSyntaxError else { return false }
            return error.line == line && error.column == column && error.reason.contains(reason)
        }
    }

    @Test func refusesInvalidUTF8InNamesAndValues() throws {
        let bad: [UInt8] = [0xC3, 0x28]  // a lead byte followed by a non-continuation byte
        for document in [
            Array(#"{""#.utf8) + bad + Array(#"":1}"#.utf8), Array(#"{"a":""#.utf8) + bad + Array(#""}"#.utf8),
        ] {
            #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(document) }
        }
        #expect(try JSONParser.parse(Array(#"{"zürich":"é"}"#.utf8)) == .object(["zürich": .string("é")]))
    }

    @Test func refusesDeepNesting() {
        #expect(throws: JSONSyntaxError.self) { try parse(String(repeating: "[", count: 10_000)) }
    }

    @Test func canonicalNumbersAndStringsRoundTrip() throws {
        let value = JSONValue.array([
            .number(40), .number(-0.5), .number(13.3479845), .number(1e-7), .number(1e21), .number(0.1 + 0.2),
            .string("tab\tquote\"back\\slash\u{01}é"),
        ])
        #expect(value.canonicalText().hasPrefix("[40,-0.5,13.3479845,"))
        #expect(try parse(value.canonicalText()) == value)
    }

    @Test func canonicalTextSortsKeys() throws {
        let value = try parse(#"{"b": 1, "a": {"d": 2, "c": [3]}}"#)
        #expect(value.canonicalText() == #"{"a":{"c":[3],"d":2},"b":1}"#)
    }
}

@Suite struct JSONNumberTests {
    /// Every number must parse to exactly the double Swift's own parser gives.
    @Test(arguments: [
        "0", "-0", "1", "13.3479845", "52.4572708", "-8.6254356", "0.1", "0.30000000000000004",
        "123456789012345", "1234567890123456789", "12345678901234567890123", "1e22", "1e23", "1.5e-7",
        "2.2250738585072014e-308", "4.9e-324", "1.7976931348623157e308", "0.000000000000000000001",
        "954219.8888999997", "4442967.642000001", "9007199254740993", "-1E+2", "1e-22", "3.0e-5",
    ])
    func matchesSwiftsParser(text: String) throws {
        let parsed = try JSONParser.parse(Data(text.utf8))
        #expect(parsed == .number(try #require(Double(text))))
    }

    @Test func randomDecimalsMatchSwiftsParser() throws {
        var state: UInt64 = 7
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let integer = Int(state >> 40) % 400 - 200
            let fraction = String(state % 10_000_000_000)
            let text = "\(integer).\(fraction)"
            #expect(try JSONParser.parse(Data(text.utf8)) == .number(Double(text)!), "\(text)")
        }
    }
}

@Suite struct CanonicalJSONObjectTests {
    @Test func writesTheSameBytesAsTheTree() {
        var object = CanonicalJSONObject()
        object.add("a", .string("x\"y"))
        object.add("b", .array([.number(1.5), .null]))
        object.add("c", .object(["z": .bool(true), "y": .number(-2)]))
        let tree = JSONValue.object([
            "c": .object(["y": .number(-2), "z": .bool(true)]), "a": .string("x\"y"),
            "b": .array([.number(1.5), .null]),
        ])
        #expect(object.text == tree.canonicalText())
    }
}

@Suite struct DecimalParserTests {
    func parse(_ text: String) -> Double? {
        Array(text.utf8).withUnsafeBufferPointer { DecimalParser.parse($0) }
    }

    /// Numbers of every length, with leading zeros, signs and exponents, parse to the double
    /// Swift's own parser gives: the fast path where it is exact, the standard library past it.
    @Test func everyLengthMatchesSwiftsParser() {
        var state: UInt64 = 11
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        func digits(_ count: UInt64) -> String { String((0..<count).map { _ in Character("\(next() % 10)") }) }
        for _ in 0..<20_000 {
            var text = ["", "-", "+"][Int(next() % 3)]
            text += String(repeating: "0", count: Int(next() % 4)) + digits(next() % 12)
            if next() % 4 != 0 { text += "." + digits(next() % 14) }
            if next() % 5 == 0 {
                text += ["e", "E"][Int(next() % 2)] + ["", "-", "+"][Int(next() % 3)] + digits(1 + next() % 2)
            }
            let swift = Double(text.hasPrefix("+") ? String(text.dropFirst()) : text)
            guard let swift, text.contains(where: \.isNumber) else { continue }
            #expect(parse(text) == swift, "\(text)")
        }
    }

    /// Any byte that is no part of a number's syntax, in place of any digit of a long number,
    /// makes it no number.
    @Test func anyOtherByteAnywhereRefusesALongNumber() {
        let digits = Array("1234567890123".utf8)
        for byte in UInt8.min...UInt8.max where !"0123456789.eE+-".utf8.contains(byte) {
            for position in digits.indices {
                var bytes = digits
                bytes[position] = byte
                #expect(bytes.withUnsafeBufferPointer { DecimalParser.parse($0) } == nil, "\(byte) at \(position)")
            }
        }
    }

    @Test(arguments: ["", "-", "+", ".", "-.", "e5", "1e", "1e+", "1.2.3", "--1", "1-", " 1", "1 ", "0x10", "1,5"])
    func refusesWhatIsNoNumber(text: String) {
        #expect(parse(text) == nil, "\(text)")
    }

    @Test(arguments: [("1.", 1.0), (".5", 0.5), ("+2.25", 2.25), ("-0", -0.0), ("0000000000000000001.5", 1.5)])
    func acceptsTheShortForms(text: String, value: Double) {
        #expect(parse(text) == value)
        #expect(parse(text)?.sign == value.sign)
    }
}
