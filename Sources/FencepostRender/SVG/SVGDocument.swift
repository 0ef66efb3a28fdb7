import Foundation

/// Builds SVG (XML) text element by element, escaping every attribute value and text, so any
/// region name or id from a config is safe in the output.
struct SVGDocument {
    private(set) var text = ""
    private var open: [String] = []

    /// `<name attributes>`; close with ``end()``.
    mutating func start(_ name: String, _ attributes: KeyValuePairs<String, String?> = [:]) {
        text += "<\(name)"
        append(attributes)
        text += ">"
        open.append(name)
    }

    mutating func end() {
        text += "</\(open.removeLast())>"
    }

    /// `<name attributes/>`, or with text content when `content` is given.
    mutating func element(_ name: String, _ attributes: KeyValuePairs<String, String?> = [:], content: String? = nil) {
        text += "<\(name)"
        append(attributes)
        if let content {
            text += ">\(Self.escape(content))</\(name)>"
        } else {
            text += "/>"
        }
    }

    /// Text already made safe by this type's rules (a nested document, a CDATA script).
    mutating func raw(_ markup: String) {
        text += markup
    }

    mutating func newline() {
        text += "\n"
    }

    private mutating func append(_ attributes: KeyValuePairs<String, String?>) {
        for (key, value) in attributes {
            guard let value else { continue }
            text += " \(key)=\"\(Self.escape(value))\""
        }
    }

    /// XML-escaped text, also safe in a double-quoted attribute. Control characters XML 1.0
    /// forbids are dropped.
    static func escape(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value >= 0x20, scalar.value != 0xFFFE, scalar.value != 0xFFFF {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}

/// Numbers as SVG wants them: short, no exponent, at most two decimals. Written by hand: a
/// map writes hundreds of thousands of them, and `String(format:)` was most of its time.
func px(_ value: Double) -> String {
    guard value.isFinite, abs(value) < 1e13 else { return "0" }
    let hundredths = Int64((value * 100).rounded())
    let whole = abs(hundredths) / 100
    let fraction = abs(hundredths) % 100
    var text = hundredths < 0 ? "-" : ""
    text += String(whole)
    if fraction != 0 {
        text += fraction % 10 == 0 ? ".\(fraction / 10)" : (fraction < 10 ? ".0\(fraction)" : ".\(fraction)")
    }
    return text
}
