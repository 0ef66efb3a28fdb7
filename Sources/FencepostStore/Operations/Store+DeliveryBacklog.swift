import FencepostCore
package import Foundation

/// What a consumer of the outbox's events (a webhook or a sink) has still to deliver.
package struct DeliveryBacklog: Sendable, Hashable {
    /// Event rows after the consumer's cursor.
    package var rows: Int
    /// When the oldest of them was committed; nil when there is none.
    package var oldestCommittedAt: Date?

    /// Seconds the oldest undelivered event has waited at `now` (0 when none waits).
    package func lagSeconds(at now: Date = Date()) -> Double {
        guard let oldestCommittedAt else { return 0 }
        return max(0, now.timeIntervalSince(oldestCommittedAt))
    }
}

extension Store {
    /// The event rows after `seq`: how many, and the commit time of the first.
    package func deliveryBacklog(after seq: Int64) async throws -> DeliveryBacklog {
        try await read { tx in
            let rows: Int64 =
                try await tx.value("SELECT COUNT(*) FROM outbox WHERE entity = 'event' AND seq > ?", seq) ?? 0
            let oldest: String? = try await tx.value(
                "SELECT created_at FROM outbox WHERE entity = 'event' AND seq > ? ORDER BY seq LIMIT 1", seq)
            return DeliveryBacklog(
                rows: Int(rows),
                oldestCommittedAt: oldest.flatMap { Timestamp.parse($0) }.map(Date.init(timeIntervalSince1970:)))
        }
    }

    /// How many events one consumer gave up on (its dead letters).
    package func deadLetterCount(_ consumer: String) async throws -> Int {
        try await read { tx in
            let count: Int64 =
                try await tx.value("SELECT COUNT(*) FROM webhook_dead_letters WHERE webhook = ?", consumer) ?? 0
            return Int(count)
        }
    }
}

extension Store {
    /// Where one consumer's cursor stands and what lies after it; nil when it has no cursor yet.
    package func deliveryPosition(_ consumer: String) async throws -> (cursor: Int64, backlog: DeliveryBacklog)? {
        guard
            let cursor: Int64 = try await read({ tx in
                try await tx.value("SELECT last_seq FROM webhook_cursors WHERE webhook = ?", consumer)
            })
        else { return nil }
        return (cursor, try await deliveryBacklog(after: cursor))
    }
}

extension Store {
    /// The regions each of `devices` is in now (its open visits), and the devices inside each
    /// of `regions`: what a presence display shows.
    package func presence(devices: Set<String>, regions: Set<String>) async throws -> (
        regionsOf: [String: [String]], devicesIn: [String: [String]]
    ) {
        try await read { tx in
            var regionsOf: [String: [String]] = [:]
            var devicesIn: [String: [String]] = [:]
            for row in try await tx.rows(
                "SELECT device, region FROM visits WHERE status = 'open' ORDER BY region, device")
            {
                let device: String = row["device"]
                let region: String = row["region"]
                if devices.contains(device) { regionsOf[device, default: []].append(region) }
                if regions.contains(region) { devicesIn[region, default: []].append(device) }
            }
            return (regionsOf, devicesIn)
        }
    }
}
