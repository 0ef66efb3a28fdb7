import FencepostCore
import Foundation
import Testing

@Suite struct JSONParserTests {
    func parse(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Data(text.utf8))
    }

    @Test func parsesEveryKindOfValue() throws {
        let value = try parse(#" {"a": [1, -2.5e3, true, false, null], "b": {"c": "x\"y\\z\u00e9\ud83d\ude00"}} "#)
        #expect(value == .object([
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

    @Test func refusesDeepNesting() {
        #expect(throws: JSONSyntaxError.self) { try parse(String(repeating: "[", count: 10_000)) }
    }

    @Test func canonicalTextSortsKeys() throws {
        let value = try parse(#"{"b": 1, "a": {"d": 2, "c": [3]}}"#)
        #expect(value.canonicalText() == #"{"a":{"c":[3],"d":2},"b":1}"#)
    }
}
