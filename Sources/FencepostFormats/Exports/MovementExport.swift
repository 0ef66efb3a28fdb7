package import FencepostCore
import FencepostGeometry
import Foundation

/// Stops and trips as the exports list them (`scan --stops|--trips`, `stops`, `trips`, the HTTP
/// API): times as RFC 3339 UTC, durations in seconds, distances in metres, speeds in km/h.
package enum MovementExport {
    package static let stopCSVHeader = "id,device,start,end,duration_s,lat,lon,fixes,status\n"
    package static let tripCSVHeader =
        "id,device,start,end,duration_s,distance_m,max_speed_kmh,mean_speed_kmh,from_stop,to_stop,start_lat,start_lon,end_lat,end_lon,fixes,regions\n"

    package static func csvLine(_ stop: Stop) -> String {
        let fields = [
            stop.id, stop.device, time(stop.start), time(stop.end), seconds(stop.duration), degrees(stop.lat),
            degrees(stop.lon), String(stop.fixes), stop.isOpen ? "open" : "closed",
        ]
        return CSV.line(fields)
    }

    /// A trip's line; `regions`: those it visited on the way (a store's visits), `;`-separated.
    package static func csvLine(_ trip: Trip, regions: [String] = []) -> String {
        let fields = [
            trip.id, trip.device, time(trip.start), time(trip.end), seconds(trip.duration), metres(trip.distance),
            kmh(trip.maxSpeed), kmh(trip.meanSpeed), trip.fromStop?.id ?? "", trip.toStop?.id ?? "",
            degrees(trip.startLat), degrees(trip.startLon), degrees(trip.endLat), degrees(trip.endLon),
            String(trip.fixes), regions.joined(separator: ";"),
        ]
        return CSV.line(fields)
    }

    package static func json(_ stop: Stop) -> JSONValue {
        .object([
            "id": .string(stop.id), "device": .string(stop.device), "start": .string(time(stop.start)),
            "end": .string(time(stop.end)), "duration_s": .number(rounded(stop.duration, 3)),
            "lat": .number(rounded(stop.lat, 7)), "lon": .number(rounded(stop.lon, 7)),
            "fixes": .number(Double(stop.fixes)), "status": .string(stop.isOpen ? "open" : "closed"),
        ])
    }

    package static func json(_ trip: Trip, regions: [String]? = nil) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(trip.id), "device": .string(trip.device), "start": .string(time(trip.start)),
            "end": .string(time(trip.end)), "duration_s": .number(rounded(trip.duration, 3)),
            "distance_m": .number(rounded(trip.distance, 1)), "max_speed_kmh": .number(rounded(trip.maxSpeed * 3.6, 1)),
            "mean_speed_kmh": .number(rounded(trip.meanSpeed * 3.6, 1)),
            "from_stop": trip.fromStop.map { .string($0.id) } ?? .null,
            "to_stop": trip.toStop.map { .string($0.id) } ?? .null, "fixes": .number(Double(trip.fixes)),
        ]
        if let regions { object["regions"] = .array(regions.map(JSONValue.string)) }
        return .object(object)
    }

    package static func jsonLine(_ stop: Stop) -> String { json(stop).canonicalText() + "\n" }
    package static func jsonLine(_ trip: Trip, regions: [String]? = nil) -> String {
        json(trip, regions: regions).canonicalText() + "\n"
    }

    /// A stop as a Point at its centre.
    package static func feature(_ stop: Stop) -> JSONValue {
        var properties = json(stop).objectValue ?? [:]
        properties["type"] = .string("stop")
        return .object([
            "type": .string("Feature"), "geometry": Shape.point(Position(lon: stop.lon, lat: stop.lat)).geoJSON,
            "properties": .object(properties),
        ])
    }

    /// A trip as a line from its departure to its arrival (the way itself is the device's track).
    package static func feature(_ trip: Trip, regions: [String]? = nil) -> JSONValue {
        var properties = json(trip, regions: regions).objectValue ?? [:]
        properties["type"] = .string("trip")
        let geometry: JSONValue = .object([
            "type": .string("LineString"),
            "coordinates": .array([
                .array([.number(rounded(trip.startLon, 7)), .number(rounded(trip.startLat, 7))]),
                .array([.number(rounded(trip.endLon, 7)), .number(rounded(trip.endLat, 7))]),
            ]),
        ])
        return .object(["type": .string("Feature"), "geometry": geometry, "properties": .object(properties)])
    }

    /// A stop as a calendar entry: where the device was, from when to when.
    package static func vevent(_ stop: Stop) -> [String] {
        let start = Timestamp.milliseconds(stop.start)
        let end = Timestamp.milliseconds(stop.end)
        let place = "\(degrees(stop.lat)),\(degrees(stop.lon))"
        return [
            "BEGIN:VEVENT",
            "UID:\(stop.id)@fencepost",
            "DTSTAMP:\(ICSExport.basic(end))",
            "DTSTART:\(ICSExport.basic(start))",
            "DTEND:\(ICSExport.basic(end))",
            "SUMMARY:\(ICSExport.escape("Stop at \(place)"))",
            "DESCRIPTION:\(ICSExport.escape("Device \(stop.device); \(stop.fixes) fixes; \(stop.isOpen ? "still there at the last fix" : "left")"))",
            "GEO:\(degrees(stop.lat));\(degrees(stop.lon))",
            "STATUS:\(stop.isOpen ? "TENTATIVE" : "CONFIRMED")",
            "END:VEVENT",
        ]
    }

    // MARK: - Numbers

    static func time(_ seconds: Double) -> String { Timestamp.format(seconds: seconds) }
    static func seconds(_ value: Double) -> String { String(rounded(value, 3)) }
    static func metres(_ value: Double) -> String { String(rounded(value, 1)) }
    static func kmh(_ metresPerSecond: Double) -> String { String(rounded(metresPerSecond * 3.6, 1)) }
    static func degrees(_ value: Double) -> String { String(rounded(value, 7)) }

    static func rounded(_ value: Double, _ places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (value * scale).rounded() / scale
    }
}
