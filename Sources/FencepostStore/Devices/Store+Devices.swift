import FencepostCore
package import Foundation

/// What resetting a device did.
package struct DeviceReset: Sendable, Equatable {
    /// Whether the store had a state for the device.
    package var hadState: Bool
    /// The anchor it had: the time of its last fix (fixes at or before it were dropped as
    /// already seen).
    package var previousAnchor: Double?
    /// Open visits closed with the reason `reset`.
    package var visitsClosed: Int
}

extension Store {
    /// Forgets what the store remembers of a device, its anchor, filter and monitor state, so its
    /// next fix is taken whatever its time: the way out for a device whose anchor a wrong time
    /// pushed into the future (every later real fix was dropped as `already_seen`). Its open
    /// visits close with the reason `reset` at its last fix time, held to `now` when that lies
    /// in the future (and never before the visit's enter). Events and visits are kept.
    ///
    /// In one transaction, under the device's lock: a concurrent ingest of the device waits,
    /// and an instance that cached its state sees the new version and reads it again.
    package func resetDevice(_ device: String, at now: Date = Date()) async throws -> DeviceReset {
        let timestamp = Timestamp.format(now)
        let nowSeconds = now.timeIntervalSince1970
        return try await write { tx in
            try await tx.dialect.lock("device:" + device, in: tx)
            guard let state = try await Self.deviceState(device, tx: tx) else {
                return DeviceReset(hadState: false, previousAnchor: nil, visitsClosed: 0)
            }
            let open = try await tx.rows(
                "SELECT * FROM visits WHERE device = ? AND status = 'open' ORDER BY entered_ms, id", device
            ).map(VisitRow.init)
            let writer = try tx.eventWriter(now: timestamp)
            var closed = 0
            for visit in open {
                let lastFix = min(state.anchor ?? nowSeconds, nowSeconds)
                let at = max(lastFix, visit.enteredMs.seconds)
                if try await writer.close(visitID: visit.id, at: at, reason: .reset) { closed += 1 }
            }
            // Saved empty rather than deleted: the row's version moves on, so an instance holding
            // the old state in its cache cannot mistake a new row for the one it read.
            try await Self.save([(device, DeviceState())], now: timestamp, tx: tx)
            return DeviceReset(hadState: true, previousAnchor: state.anchor, visitsClosed: closed)
        }
    }
}
