import Foundation

/// The rule for device ids that come from outside the machine (a URL, a posted payload, a
/// token's scope): 1 to 128 characters, letters, digits and `. _ : @ / + -`.
///
/// Device ids become store keys, label values, file names in exports and parts of URLs; a
/// bounded, plain alphabet keeps all of those safe and unambiguous. (Ids read from trace files
/// by the command-line tool are the user's own, and only kept to ``fileNameProblem(_:)``.)
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

    /// The most bytes a device name read from a file may have.
    public static let maximumFileNameLength = 256

    /// Why a device name read from a trace file (a CSV column, a GeoJSON property, a file name)
    /// cannot be used, or nil when it can. Looser than ``problem(_:)``, since the file is the
    /// user's own (`Bus 304`, `Zürich Tram 4`): any text but an empty one, one past 256 bytes,
    /// one with control characters (a NUL cut the id short in the store, so a device lost its
    /// anchor between runs) or bytes that are not UTF-8.
    public static func fileNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "empty" }
        let bytes = name.utf8
        if bytes.count > maximumFileNameLength { return "longer than \(maximumFileNameLength) bytes" }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "holds control characters" }
        if name.unicodeScalars.contains("\u{FFFD}") { return "not UTF-8 text" }
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
