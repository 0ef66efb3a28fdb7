import FencepostGeometry

/// Distance and top speed along a way, fix by fix.
///
/// GPS jitter would add metres to a device standing still and spikes would add hundreds, so a
/// step counts only once the device has moved farther than twice the fixes' accuracy from
/// the last counted point, and a fix far from both its neighbours while they are close to each
/// other (on a dense trace) is a spike and is left out. Speed is taken over at least
/// ``speedWindow`` seconds, so that the noise of 1 Hz fixes does not read as bursts of speed.
public struct TripMeter: Sendable, Hashable, Codable {
    /// The first fix of the way.
    public private(set) var first: FixPoint
    /// The latest fix seen.
    public private(set) var last: FixPoint
    public private(set) var distance: Double = 0
    public private(set) var maxSpeed: Double = 0
    public private(set) var fixes = 1
    /// The last counted point.
    private var anchor: FixPoint
    /// The latest fix, until the next one shows it was no spike.
    private var held: FixPoint?
    /// Counted points of the last ``speedWindow`` seconds (and the one before), with the
    /// distance travelled up to each.
    private var recent: [Mark] = []

    struct Mark: Sendable, Hashable, Codable {
        var time: Double
        var distance: Double
    }

    static let speedWindow = 10.0
    /// Steps shorter than this many metres are never counted on their own.
    static let minimumStep = 5.0
    /// A spike stands at least this far from both neighbours.
    static let spikeDistance = 50.0
    /// Fixes closer than this many seconds make the dense trace on which spikes are looked for.
    static let denseInterval = 60.0

    public init(from fix: FixPoint) {
        first = fix
        last = fix
        anchor = fix
        recent = [Mark(time: fix.time, distance: 0)]
    }

    public mutating func add(_ fix: FixPoint) {
        fixes += 1
        last = fix
        guard let previous = held else {
            held = fix
            return
        }
        held = fix
        if isSpike(previous, before: anchor, after: fix) { return }
        count(previous)
    }

    /// The figures with the held fix counted too: the way as it stands.
    public var settled: TripMeter {
        var meter = self
        if let held = meter.held {
            meter.held = nil
            meter.count(held)
        }
        return meter
    }

    private func isSpike(_ fix: FixPoint, before: FixPoint, after: FixPoint) -> Bool {
        guard fix.time - before.time < Self.denseInterval, after.time - fix.time < Self.denseInterval else {
            return false
        }
        let out = Geodesy.distance(before.position, fix.position)
        let back = Geodesy.distance(fix.position, after.position)
        let across = Geodesy.distance(before.position, after.position)
        let shorter = min(out, back)
        return shorter > Self.spikeDistance && across < shorter / 2
    }

    private mutating func count(_ fix: FixPoint) {
        let step = Geodesy.distance(anchor.position, fix.position)
        let threshold = max(Self.minimumStep, 2 * max(anchor.accuracy ?? 0, fix.accuracy ?? 0))
        guard step >= threshold else { return }
        distance += step
        anchor = fix
        recent.append(Mark(time: fix.time, distance: distance))
        while recent.count > 2, fix.time - recent[1].time >= Self.speedWindow { recent.removeFirst() }
        let base = recent[0]
        let seconds = fix.time - base.time
        if seconds >= Self.speedWindow {
            maxSpeed = max(maxSpeed, (distance - base.distance) / seconds)
        }
    }
}
