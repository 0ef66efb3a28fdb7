import Foundation

extension SinkCampaign {
    /// Circles of 100 m radius in a row going north, 400 m apart.
    static let rowLength = 10
    static let origin = (lat: 47.0, lon: 8.0)
    static let metresPerDegree = 111_320.0

    static func regionsGeoJSON() -> String {
        let features = (0..<rowLength).map { index in
            let lat = origin.lat + 400 * Double(index) / metresPerDegree
            return
                #"{"type":"Feature","geometry":{"type":"Point","coordinates":[\#(origin.lon),\#(lat)]},"properties":{"id":"stop-\#(index)","radius":100}}"#
        }
        return #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"
    }

    /// Per device, its `POST /v1/devices/{device}/locations` bodies: the device walks up and
    /// down the row, a fix every 100 m a minute apart, 150 m before the first circle to 150 m
    /// past the last: two fixes 50 m inside each circle and two 50 m outside between circles,
    /// so every four fixes make one enter and one exit. About `events` events in all.
    static func batches(events: Int, devices: Int, batch: Int) -> [String: [String]] {
        let crossings = max(1, (events + 2 * devices - 1) / (2 * devices))
        let leg = 4 * rowLength
        var bodies: [String: [String]] = [:]
        for device in 0..<devices {
            let fixes = (0..<(crossings * 4)).map { step in
                let position = (step / leg) % 2 == 0 ? step % leg : leg - 1 - step % leg
                let lat = origin.lat + (-150 + 100 * Double(position)) / metresPerDegree
                let time = 1_750_000_000 + 60 * step
                return #"{"time":\#(time),"lat":\#((lat * 1e7).rounded() / 1e7),"lon":\#(origin.lon),"accuracy":5}"#
            }
            bodies["walker-\(device)"] = stride(from: 0, to: fixes.count, by: batch).map { start in
                #"{"fixes":["# + fixes[start..<min(start + batch, fixes.count)].joined(separator: ",") + "]}"
            }
        }
        return bodies
    }

    /// `serve`'s configuration: the one sink, named `chaos`. Fixes of 2025 are not flagged
    /// `replayed` (a live writer's flag for old fixes; it is beside the point here).
    static func configuration(_ sink: String, url: String) -> String {
        let target: String
        switch sink {
        case "redis": target = #"{"type":"redis","name":"chaos","url":"\#(url)","stream":"chaos:events"}"#
        case "nats":
            target =
                #"{"type":"nats","name":"chaos","url":"\#(url)","subject":"chaos.events.{device}","stream":"CHAOS"}"#
        default:
            target =
                #"{"type":"mqtt","name":"chaos","url":"\#(url)","topic_prefix":"chaos","qos":1,"client_id":"chaos-sink"}"#
        }
        return #"{"replayed_after_seconds":0,"sinks":[\#(target)]}"#
    }
}
