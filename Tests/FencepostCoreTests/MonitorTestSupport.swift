import FencepostCore
import FencepostGeometry
import Foundation

/// Builds fixes along straight lines and runs a monitor over them, for readable monitor tests.
struct MonitorHarness {
    let monitor: Monitor
    var track: MonitorTrack
    var events: [MonitorEvent] = []

    init(regions: [Region], settings: MonitorSettings) throws {
        monitor = try Monitor(regions: regions, settings: settings)
        track = monitor.track(resuming: MonitorState(), device: "test")
    }

    /// The device's state as it would be saved.
    var state: MonitorState {
        get { monitor.state(of: track) }
        set { track = monitor.track(resuming: newValue, device: "test") }
    }

    mutating func feed(_ fixes: [Fix]) throws {
        for fix in fixes {
            try monitor.process(fix, track: &track) { events.append($0) }
        }
    }

    /// `enter@12.5` style summary of the events, for compact expectations.
    var summary: [String] {
        events.map { event in
            let flags = event.flags.names.isEmpty ? "" : "[" + event.flags.names.joined(separator: ",") + "]"
            return "\(event.kind.rawValue)@\((event.time * 1000).rounded() / 1000)\(flags)"
        }
    }

    /// The raw settings that must reproduce a brute-force containment test.
    static let raw = MonitorSettings(hysteresis: 0, enterDelay: 0, exitDelay: 0, passThrough: false)
}

/// Positions a given number of metres east and north of an origin.
struct LocalGrid {
    let projection: LocalProjection

    init(origin: Position = Position(lon: 8.54, lat: 47.37)) {
        projection = LocalProjection(origin: origin)
    }

    var origin: Position { projection.origin }

    func at(_ x: Double, _ y: Double) -> Position {
        projection.unproject(x: x, y: y)
    }

    func fix(_ x: Double, _ y: Double, t: Double, accuracy: Double? = 5, device: String = "phone") -> Fix {
        let position = at(x, y)
        return Fix(device: device, time: t, lat: position.lat, lon: position.lon, accuracy: accuracy)
    }

    /// Fixes along x at the given y, one every `dt` seconds starting at `t0`.
    func walk(xs: [Double], y: Double = 0, t0: Double = 0, dt: Double = 1, accuracy: Double? = 5) -> [Fix] {
        xs.enumerated().map { fix($1, y, t: t0 + Double($0) * dt, accuracy: accuracy) }
    }

    func circle(_ id: String, x: Double = 0, y: Double = 0, radius: Double, settings: RegionSettings = RegionSettings())
        -> Region
    {
        Region(id: id, shape: .circle(center: at(x, y), radius: radius), settings: settings)
    }

    /// An axis-aligned square, `half` metres either side of (x, y).
    func square(_ id: String, x: Double = 0, y: Double = 0, half: Double, settings: RegionSettings = RegionSettings())
        -> Region
    {
        let ring = [
            at(x - half, y - half), at(x + half, y - half), at(x + half, y + half), at(x - half, y + half),
            at(x - half, y - half),
        ]
        return Region(id: id, shape: .area(.polygon(PolygonCoordinates(rings: [ring]))), settings: settings)
    }
}
