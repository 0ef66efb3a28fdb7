import FencepostTestSupport
import Foundation

/// A deterministic workload for the campaigns: circle and square regions over a few
/// kilometres of a city, and devices wandering among them at walking to driving speeds, one
/// fix a second with a few metres of noise, so they enter, dwell in and leave regions often.
struct Workload {
    let devices: Int
    let fixesPerDevice: Int
    let seed: UInt64
    let regionCount: Int

    static let centre = (lat: 52.52, lon: 13.40)
    static let halfSize = 2_500.0  // metres
    static let start = 1_700_000_000.0

    init(devices: Int, fixesPerDevice: Int, seed: UInt64 = 1, regions: Int = 300) {
        self.devices = devices
        self.fixesPerDevice = fixesPerDevice
        self.seed = seed
        self.regionCount = regions
    }

    var fixCount: Int { devices * fixesPerDevice }

    static func degrees(x: Double, y: Double) -> (lat: Double, lon: Double) {
        let metresPerDegreeLat = 111_320.0
        let metresPerDegreeLon = 111_320.0 * cos(centre.lat * .pi / 180)
        return (centre.lat + y / metresPerDegreeLat, centre.lon + x / metresPerDegreeLon)
    }

    /// A region config: every third region a square, the rest circles, 40–300 m across.
    func regionsGeoJSON() -> String {
        var random = SplitMix64(seed: seed &* 7919)
        var features: [String] = []
        for index in 0..<regionCount {
            let x = (random.unit() * 2 - 1) * Self.halfSize
            let y = (random.unit() * 2 - 1) * Self.halfSize
            let radius = 40 + random.unit() * 260
            if index % 3 == 0 {
                let corners = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0)].map { dx, dy in
                    let point = Self.degrees(x: x + dx * radius, y: y + dy * radius)
                    return "[\(point.lon),\(point.lat)]"
                }
                features.append(
                    #"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[\#(corners.joined(separator: ","))]]},"properties":{"id":"square-\#(index)"}}"#
                )
            } else {
                let point = Self.degrees(x: x, y: y)
                features.append(
                    #"{"type":"Feature","geometry":{"type":"Point","coordinates":[\#(point.lon),\#(point.lat)]},"properties":{"id":"circle-\#(index)","radius":\#((radius * 10).rounded() / 10),"dwell":60}}"#
                )
            }
        }
        return #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",\n") + "]}\n"
    }

    /// One fix of a device's walk.
    struct Fix {
        var device: String
        var time: Double
        var lat: Double
        var lon: Double
        var accuracy: Double
    }

    /// Each device's fixes in time order, devices interleaved second by second, handed to
    /// `body` one at a time (a million fixes are never held at once).
    func forEachFix(_ body: (Fix) throws -> Void) rethrows {
        var walkers = (0..<devices).map { index in Walker(seed: seed &+ UInt64(index) &* 1_000_003) }
        for second in 0..<fixesPerDevice {
            for index in walkers.indices {
                let (x, y, noise) = walkers[index].step()
                let point = Self.degrees(x: x, y: y)
                try body(
                    Fix(
                        device: "device-\(index)", time: Self.start + Double(second), lat: point.lat, lon: point.lon,
                        accuracy: noise))
            }
        }
    }

    /// The fixes as CSV (`time,lat,lon,accuracy,device`), written to `path`.
    func writeCSV(_ path: String) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var text = "time,lat,lon,accuracy,device\n"
        try forEachFix { fix in
            text += "\(Int(fix.time)),\(Self.rounded(fix.lat)),\(Self.rounded(fix.lon)),\(fix.accuracy),\(fix.device)\n"
            if text.utf8.count > 1 << 20 {
                try handle.write(contentsOf: Data(text.utf8))
                text = ""
            }
        }
        try handle.write(contentsOf: Data(text.utf8))
    }

    /// Per device, its fixes as `POST /v1/devices/{device}/locations` bodies of `batch` fixes.
    func batches(of batch: Int) -> [String: [String]] {
        var fixes: [String: [String]] = [:]
        forEachFix { fix in
            fixes[fix.device, default: []].append(
                #"{"time":\#(Int(fix.time)),"lat":\#(Self.rounded(fix.lat)),"lon":\#(Self.rounded(fix.lon)),"accuracy":\#(fix.accuracy)}"#
            )
        }
        return fixes.mapValues { items in
            stride(from: 0, to: items.count, by: batch).map { start in
                #"{"fixes":["# + items[start..<min(start + batch, items.count)].joined(separator: ",") + "]}"
            }
        }
    }

    static func rounded(_ degrees: Double) -> Double { (degrees * 1e7).rounded() / 1e7 }

    /// A random walk in the square: a heading that drifts, a speed from walking to driving,
    /// pauses now and then (dwells), a turn at the edges; GPS noise of a few metres.
    struct Walker {
        var random: SplitMix64
        var x: Double, y: Double
        var heading: Double
        var speed: Double
        var pause = 0

        init(seed: UInt64) {
            random = SplitMix64(seed: seed)
            x = (random.unit() * 2 - 1) * Workload.halfSize
            y = (random.unit() * 2 - 1) * Workload.halfSize
            heading = random.unit() * 2 * .pi
            speed = 1.5 + random.unit() * 12
        }

        mutating func step() -> (x: Double, y: Double, accuracy: Double) {
            if pause > 0 {
                pause -= 1
            } else {
                if random.unit() < 0.002 { pause = Int(random.unit() * 300) }
                if random.unit() < 0.01 { speed = 1.5 + random.unit() * 12 }
                heading += (random.unit() - 0.5) * 0.3
                x += cos(heading) * speed
                y += sin(heading) * speed
                if abs(x) > Workload.halfSize || abs(y) > Workload.halfSize {
                    heading += .pi
                    x = max(-Workload.halfSize, min(Workload.halfSize, x))
                    y = max(-Workload.halfSize, min(Workload.halfSize, y))
                }
            }
            let accuracy = 3 + (random.unit() * 7).rounded()
            let noise = accuracy / 2
            return (x + (random.unit() - 0.5) * noise, y + (random.unit() - 0.5) * noise, accuracy)
        }
    }
}
