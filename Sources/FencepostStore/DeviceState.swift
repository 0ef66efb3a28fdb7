public import FencepostCore

/// Everything Fencepost remembers of a device between inputs, stored as JSON in `devices`.
public struct DeviceState: Sendable, Hashable, Codable {
    /// The time of the last fix processed: fixes at or before it are already seen.
    public var anchor: Double?
    public var filter: FilterState
    public var monitor: MonitorState

    public init(anchor: Double? = nil, filter: FilterState = FilterState(), monitor: MonitorState = MonitorState()) {
        self.anchor = anchor
        self.filter = filter
        self.monitor = monitor
    }
}
