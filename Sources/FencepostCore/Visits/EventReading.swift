/// The event repository as its readers see it (the exports): events and visits in time order,
/// the regions they name, each device's last fix time. The store is one; readers need not know
/// which database holds them.
public protocol EventReading: Sendable {
    /// Calls `body` for each event `query` selects, in time order, without holding them all.
    func forEachEvent(_ query: EventQuery, _ body: (EventRow) throws -> Void) async throws
    /// Calls `body` for each visit (of a device, of a region, of a roster group's devices), in
    /// enter-time order.
    func forEachVisit(
        openOnly: Bool, device: String?, region: String?, group: String?, _ body: (VisitRow) throws -> Void
    ) async throws
    /// The monitored regions.
    func regions() async throws -> [Region]
    /// Each device's last processed fix time, in milliseconds since the epoch.
    func deviceAnchors() async throws -> [String: Int64]
}
