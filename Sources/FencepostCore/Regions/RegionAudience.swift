/// Whom a region applies to: every device (no selector), or the devices it names (ids, or
/// patterns with `*` for any run of characters and `?` for one) and the members of the groups it
/// names (the roster's groups, ``DeviceRoster``).
public struct RegionAudience: Sendable, Hashable {
    /// Device ids and patterns, as given.
    public var devices: [String]
    /// Group names, as given.
    public var groups: [String]

    public init(devices: [String] = [], groups: [String] = []) {
        self.devices = devices
        self.groups = groups
    }

    /// Every device: the region names neither devices nor groups.
    public static let everyone = RegionAudience()

    public var isEveryone: Bool { devices.isEmpty && groups.isEmpty }

    /// Whether the region applies to `device`, a member of `groups`.
    public func includes(device: String, groups memberOf: Set<String>) -> Bool {
        if isEveryone { return true }
        if groups.contains(where: memberOf.contains) { return true }
        return devices.contains { Self.matches(device, $0) }
    }

    /// Whether a device selector is a pattern (`*` or `?`) rather than an id.
    public static func isPattern(_ selector: String) -> Bool {
        selector.utf8.contains { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") }
    }

    /// Whether `device` matches `selector`: equal, or matched by its pattern.
    public static func matches(_ device: String, _ selector: String) -> Bool {
        guard isPattern(selector) else { return device == selector }
        return matches(Array(device.utf8)[...], Array(selector.utf8)[...])
    }

    private static func matches(_ text: ArraySlice<UInt8>, _ pattern: ArraySlice<UInt8>) -> Bool {
        var text = text
        var pattern = pattern
        // The last `*` seen and the text position it stood for, to backtrack to.
        var star: (pattern: ArraySlice<UInt8>, text: ArraySlice<UInt8>)?
        while let byte = text.first {
            if let want = pattern.first, want == UInt8(ascii: "?") || want == byte, want != UInt8(ascii: "*") {
                text = text.dropFirst()
                pattern = pattern.dropFirst()
            } else if pattern.first == UInt8(ascii: "*") {
                pattern = pattern.dropFirst()
                star = (pattern, text)
            } else if let last = star {
                text = last.text.dropFirst()
                star = (last.pattern, text)
                pattern = last.pattern
            } else {
                return false
            }
        }
        return pattern.allSatisfy { $0 == UInt8(ascii: "*") }
    }
}
