public import Foundation

/// Time inside regions per device and period: what a field-service company bills from.
///
/// Visits are cut at period boundaries (local midnight in the sheet's zone): a night at home
/// counts partly to each day. Per device, region (or tag) and period: the time inside, the
/// visits that touched the period, the first entry and the last exit within it (clipped to
/// the period: a visit going on at midnight enters at 00:00). Overlapping visits of one device
/// in regions sharing a tag count the time once for the tag. Movement (distance, time moving)
/// comes from trips, cut the same way in proportion to time.
public struct TimeSheet: Sendable {
    struct Key: Sendable, Hashable {
        var periodStart: Double
        var device: String
        /// A region id, a tag, or "" for the device's movement row.
        var subject: String
    }

    public struct Row: Sendable {
        public var period: String
        public var periodStart: Double
        public var periodEnd: Double
        public var device: String
        /// A region id or a tag; nil on a device's movement row.
        public var subject: String?
        public var inside: Double = 0
        public var visits = 0
        public var firstEntry: Double?
        public var lastExit: Double?
        public var distance: Double = 0
        public var moving: Double = 0
        /// Pieces of visits, kept until the end to merge overlaps (tags only).
        var pieces: [(start: Double, end: Double)] = []

        init(_ bounds: (start: Double, end: Double, label: String), device: String, subject: String?) {
            period = bounds.label
            periodStart = bounds.start
            periodEnd = bounds.end
            self.device = device
            self.subject = subject
        }
    }

    public let period: SummaryPeriod
    public let calendar: Calendar
    /// The window summed over: pieces outside it are left out.
    public let window: Range<Double>
    private var rows: [Key: Row] = [:]

    public init(period: SummaryPeriod, zone: TimeZone, window: Range<Double>) {
        self.period = period
        self.calendar = SummaryPeriod.calendar(in: zone)
        self.window = window
    }

    /// A stay inside `subject` (a region id or a tag) from `start` to `end` (an open visit ends
    /// where the caller says: the device's last fix).
    public mutating func addVisit(device: String, subject: String, start: Double, end: Double) {
        forEachPiece(start, end) { piece, bounds in
            let key = Key(periodStart: bounds.start, device: device, subject: subject)
            var row = rows[key] ?? Row(bounds, device: device, subject: subject)
            row.visits += 1
            row.pieces.append(piece)
            row.firstEntry = min(row.firstEntry ?? piece.start, piece.start)
            row.lastExit = max(row.lastExit ?? piece.end, piece.end)
            rows[key] = row
        }
    }

    /// A trip of `device`: its time moving, and its distance shared among periods by time.
    public mutating func addTrip(device: String, start: Double, end: Double, distance: Double) {
        let duration = end - start
        forEachPiece(start, end) { piece, bounds in
            let key = Key(periodStart: bounds.start, device: device, subject: "")
            var row = rows[key] ?? Row(bounds, device: device, subject: nil)
            row.distance += duration > 0 ? distance * (piece.end - piece.start) / duration : distance
            row.moving += piece.end - piece.start
            rows[key] = row
        }
    }

    /// The rows by period, device and first entry (a device's movement row first), then
    /// subject.
    public func finished() -> [Row] {
        rows.values.map { row in
            var row = row
            row.inside = Self.covered(row.pieces)
            row.pieces = []
            return row
        }.sorted { a, b in
            (a.periodStart, a.device, a.firstEntry ?? -.infinity, a.subject ?? "")
                < (b.periodStart, b.device, b.firstEntry ?? -.infinity, b.subject ?? "")
        }
    }

    // MARK: - Cutting

    /// The parts of `start..<end` inside the window, one per period, with the period's bounds.
    private func forEachPiece(
        _ start: Double, _ end: Double,
        _ body: (_ piece: (start: Double, end: Double), _ bounds: (start: Double, end: Double, label: String)) -> Void
    ) {
        var from = max(start, window.lowerBound)
        let to = min(end, window.upperBound)
        guard from < to || (start == end && window.contains(start)) else { return }
        while true {
            let bounds = period.period(containing: from, calendar: calendar)
            let pieceEnd = min(to, bounds.end)
            body((from, pieceEnd), bounds)
            if pieceEnd >= to || bounds.end <= from { return }
            from = bounds.end
        }
    }

    /// Seconds covered by the union of the pieces.
    static func covered(_ pieces: [(start: Double, end: Double)]) -> Double {
        var total = 0.0
        var reach = -Double.infinity
        for piece in pieces.sorted(by: { $0.start < $1.start }) {
            let start = max(piece.start, reach)
            if piece.end > start { total += piece.end - start }
            reach = max(reach, piece.end)
        }
        return total
    }
}
