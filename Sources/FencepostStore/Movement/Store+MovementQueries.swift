package import FencepostCore

/// What `stops`, `trips`, `/v1/stops`, `/v1/trips` and time sheets read.
package struct MovementQuery: Sendable {
    package var device: String?
    /// A roster group: only its members.
    package var group: String?
    /// Seconds; stops and trips overlapping `since..<until`.
    package var since: Double?
    package var until: Double?

    package init(device: String? = nil, group: String? = nil, since: Double? = nil, until: Double? = nil) {
        self.device = device
        self.group = group
        self.since = since
        self.until = until
    }

    func conditions(_ dialect: any SQLDialect) -> (sql: String, arguments: [SQLValue]) {
        var conditions: [String] = []
        var arguments: [SQLValue] = []
        if let device {
            conditions.append("device = ?")
            arguments.append(.text(device))
        }
        if let group {
            conditions.append("device IN (\(dialect.groupMembers))")
            arguments.append(.text(group))
        }
        if let since {
            conditions.append("end_ms >= ?")
            arguments.append(.integer(Timestamp.milliseconds(since)))
        }
        if let until {
            conditions.append("start_ms < ?")
            arguments.append(.integer(Timestamp.milliseconds(until)))
        }
        return (conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "), arguments)
    }
}

extension Store {
    /// Calls `body` for each stored stop the query selects, by start time.
    package func forEachStop(_ query: MovementQuery, _ body: (Stop) throws -> Void) async throws {
        try await read { tx in
            let (filter, arguments) = query.conditions(tx.dialect)
            try await tx.forEachRow("SELECT * FROM stops \(filter) ORDER BY start_ms, id", arguments) { row in
                try body(Self.stop(row))
            }
        }
    }

    /// Calls `body` for each stored trip the query selects, by start time, with its stops.
    package func forEachTrip(_ query: MovementQuery, _ body: (Trip) throws -> Void) async throws {
        try await read { tx in
            let (filter, arguments) = query.conditions(tx.dialect)
            var stops: [String: Stop] = [:]
            try await tx.forEachRow(
                "SELECT * FROM stops WHERE id IN (SELECT from_stop FROM trips \(filter)) OR id IN (SELECT to_stop FROM trips \(filter))",
                arguments + arguments
            ) { row in
                let stop = Self.stop(row)
                stops[stop.id] = stop
            }
            try await tx.forEachRow("SELECT * FROM trips \(filter) ORDER BY start_ms, id", arguments) { row in
                let start: Int64 = row["start_ms"]
                let end: Int64 = row["end_ms"]
                let fixes: Int64 = row["fixes"]
                let fromStop: String? = row["from_stop"]
                let toStop: String? = row["to_stop"]
                try body(
                    Trip(
                        device: row["device"], start: start.seconds, end: end.seconds, distance: row["distance"],
                        maxSpeed: row["max_speed"], fixes: Int(fixes), fromStop: fromStop.flatMap { stops[$0] },
                        toStop: toStop.flatMap { stops[$0] }, startLat: row["start_lat"], startLon: row["start_lon"],
                        endLat: row["end_lat"], endLon: row["end_lon"]))
            }
        }
    }

    private static func stop(_ row: SQLRow) -> Stop {
        let start: Int64 = row["start_ms"]
        let end: Int64 = row["end_ms"]
        let fixes: Int64 = row["fixes"]
        let status: String = row["status"]
        return Stop(
            device: row["device"], start: start.seconds, end: end.seconds, lat: row["lat"], lon: row["lon"],
            fixes: Int(fixes), isOpen: status == "open")
    }

    /// The regions each trip's device had visits in during the trip (a visit overlapping its
    /// time), by first entry: the visits read once per device over the trips' span.
    package func regionsVisited(during trips: [Trip]) async throws -> [[String]] {
        var visitsByDevice: [String: [VisitRow]] = [:]
        for (device, theirs) in Dictionary(grouping: trips, by: \.device) {
            let start = theirs.map(\.start).min() ?? 0
            let end = theirs.map(\.end).max() ?? 0
            var visits: [VisitRow] = []
            try await forEachVisit(
                device: device, overlapping: Timestamp.milliseconds(start)..<(Timestamp.milliseconds(end) + 1)
            ) { visits.append($0) }
            visitsByDevice[device] = visits
        }
        return trips.map { trip in
            let start = Timestamp.milliseconds(trip.start)
            let end = Timestamp.milliseconds(trip.end)
            var seen: [String] = []
            for visit in visitsByDevice[trip.device] ?? []
            where visit.enteredMs <= end && (visit.exitedMs ?? .max) >= start && !seen.contains(visit.region) {
                seen.append(visit.region)
            }
            return seen
        }
    }
}
