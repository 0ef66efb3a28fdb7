import Foundation

/// The rule for device ids that come from outside the machine (a URL, a posted payload, a
/// token's scope): 1 to 128 characters, letters, digits and `. _ : @ / + -`.
///
/// Device ids become store keys, label values, file names in exports and parts of URLs; a
/// bounded, plain alphabet keeps all of those safe and unambiguous. (Ids read from trace files
/// by the command-line tool are the user's own and are not checked.)
public enum DeviceID {
    public static let maximumLength = 128

    /// Why `id` is not an acceptable device id, or nil when it is.
    public static func problem(_ id: String) -> String? {
        if id.isEmpty { return "the device id is empty" }
        let bytes = id.utf8
        if bytes.count > maximumLength {
            return "the device id is \(bytes.count) bytes long; at most \(maximumLength) are allowed"
        }
        if let bad = bytes.first(where: { !isAllowed($0) }) {
            let shown =
                bad >= 0x21 && bad < 0x7F ? "\"\(Character(Unicode.Scalar(bad)))\"" : String(format: "byte 0x%02X", bad)
            return "the device id contains \(shown); only letters, digits and . _ : @ / + - are allowed"
        }
        return nil
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"),
            UInt8(ascii: "+"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
