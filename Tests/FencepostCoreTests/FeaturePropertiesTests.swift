import Testing

@testable import FencepostCore

/// A feature's properties answer every name as their dictionary does, whether the name is one
/// of theirs, shares a signature bit with one, or is equal to one only as Unicode (which a
/// comparison of bytes would miss).
@Suite struct FeaturePropertiesTests {
    static let memberSets: [[String: JSONValue]] = [
        [:],
        ["id": .string("c1"), "name": .string("circle 1"), "radius": .number(120)],
        // "radius" and "rdiusaa" share length and first byte, so their signature bit.
        ["rdiusaa": .number(1), "enabled": .bool(false), "": .null],
        // The Kelvin sign is canonically a K: "\u{212A}ind" equals "Kind", and "caf\u{E9}" "cafe\u{301}".
        ["\u{212A}ind": .string("kelvin"), "caf\u{E9}": .number(2), "dwell": .number(60)],
    ]

    static let names = [
        "id", "name", "radius", "rdiusaa", "enabled", "", "dwell", "hysteresis", "Kind", "\u{212A}ind",
        "cafe\u{301}", "caf\u{E9}", "cafe", "tags", "schedule",
    ]

    @Test(arguments: memberSets) func answersAsTheDictionary(_ members: [String: JSONValue]) {
        let properties = FeatureProperties(members)
        for name in Self.names {
            #expect(properties[name] == members[name], "\(name)")
        }
    }
}
