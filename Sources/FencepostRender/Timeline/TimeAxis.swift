import FencepostCore
import Foundation

/// Ticks for a time axis in UTC: a step from a fixed ladder (minutes to months) giving about
/// `target` ticks, each labelled as much as its step needs.
struct TimeAxis {
    let start: Double
    let end: Double
    let step: Double

    static let steps: [Double] = [
        60, 300, 900, 1_800, 3_600, 3 * 3_600, 6 * 3_600, 12 * 3_600, 86_400, 2 * 86_400, 7 * 86_400, 14 * 86_400,
        30 * 86_400, 91 * 86_400, 365 * 86_400,
    ]

    init(start: Double, end: Double, target: Int) {
        self.start = start
        self.end = end
        let span = max(end - start, 60)
        step = Self.steps.first { span / $0 <= Double(target) } ?? Self.steps.last!
    }

    /// Tick times within the axis, on whole steps since the epoch (UTC).
    var ticks: [Double] {
        var tick = (start / step).rounded(.up) * step
        var ticks: [Double] = []
        while tick <= end, ticks.count < 500 {
            ticks.append(tick)
            tick += step
        }
        return ticks
    }

    /// `07:45`, `Feb 18 06:00`, `2019-02-18`: a tick's label at this step, in UTC.
    func label(_ time: Double) -> String {
        let text = Timestamp.format(seconds: time)  // 2019-02-18T07:45:00.000Z
        let date = String(text.prefix(10))
        let clock = String(text.dropFirst(11).prefix(5))
        if step >= 86_400 { return date }
        if clock == "00:00" { return date }
        return clock
    }
}
