/// How many regions a phone's OS watches for the app, as the roster says it for a device or a
/// group: a number (`geofence_budget`), or a platform (`platform`: `ios` 20, `android` 100).
public struct GeofenceBudget: Sendable, Hashable, Codable {
    /// The number of regions, 2 to 10,000.
    public var count: Int?
    /// `ios` or `android`.
    public var platform: String?

    public static let counts = 2...10_000
    public static let platforms = ["android", "ios"]

    public init(count: Int? = nil, platform: String? = nil) {
        self.count = count
        self.platform = platform
    }

    public var isEmpty: Bool { count == nil && platform == nil }

    /// The number it stands for: the count, else the platform's.
    public var resolved: Int? {
        count ?? platform.flatMap(MonitoredSetPlanner.budget(platform:))
    }

    /// Its members as the roster's JSON carries them, only those given.
    public var members: [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        if let count { members["geofence_budget"] = .number(Double(count)) }
        if let platform { members["platform"] = .string(platform) }
        return members
    }

    /// As a person reads it: `android`, `50`, `50 (ios)`, or `(none)`.
    public var text: String {
        switch (count, platform) {
        case (let count?, let platform?): "\(count) (\(platform))"
        case (let count?, nil): "\(count)"
        case (nil, let platform?): platform
        case (nil, nil): "(none)"
        }
    }
}
