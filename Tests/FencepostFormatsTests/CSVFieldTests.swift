import FencepostFormats
import Foundation
import Testing

@Suite struct CSVFieldTests {
    /// A field is quoted, its quotes doubled, exactly when it holds a comma, quote or line
    /// break, wherever that is, in short (inline) strings and long ones.
    @Test func quotedExactlyWhenItMustBe() {
        let long = String(repeating: "x", count: 100)
        for (text, quoted) in [
            ("", false), ("plain", false), ("é ü;\t", false), (long, false), ("a,b", true), ("\"", true),
            ("a\nb", true), ("a\rb", true), (long + ",", true), ("," + long, true), (long + "\"" + long, true),
        ] {
            let expected = quoted ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
            #expect(CSV.field(text) == expected, "\(text)")
        }
    }
}

@Suite struct CSVLineTests {
    /// A line is its fields, each as ``CSV/field(_:)`` gives it, between commas, with a line
    /// break: empty fields, non-ASCII and long ones, and lines where one field must be quoted.
    @Test func aLineIsItsFieldsJoined() {
        let long = String(repeating: "é", count: 80)
        for fields in [
            [""], ["", ""], ["a"], ["", "b", ""], ["id", "2025-06-01T06:00:00.000Z", "enter", long, "", "ü"],
            ["a", "b,c", ""], ["\"quoted\"", long], ["line\nbreak"],
        ] {
            #expect(CSV.line(fields) == fields.map(CSV.field).joined(separator: ",") + "\n", "\(fields)")
        }
    }
}
