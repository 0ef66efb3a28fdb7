import FencepostCore
import FencepostFormats
package import FencepostMQTT
package import FencepostStore
package import Logging
import Synchronization

/// An MQTT broker as a sink, through our MQTT client (``MQTTClient``): each event on
/// `PREFIX/events/DEVICE` (its JSON, QoS 1), confirmed by the broker's PUBACK; then, retained,
/// each device's state on `PREFIX/devices/DEVICE/state` (the regions it is in now). With Home
/// Assistant discovery, a `device_tracker` per device (state on `PREFIX/devices/DEVICE/location`:
/// the region's name, or `not_home`) and a presence `binary_sensor` per region (state on
/// `PREFIX/regions/REGION/presence`: `ON` while any device is inside), their configs retained
/// under `homeassistant/`; a region no longer in the store gets an empty config (Home Assistant
/// removes the entity). An event sent again after a crash arrives twice (MQTT has no
/// deduplication): consumers deduplicate by the event's id.
package final class MQTTSink: OutboxSink {
    package let name: String
    let prefix: String
    let discovery: Bool
    package let batchSize: Int
    package let maxAttempts: Int
    let client: MQTTClient
    let logger: Logger
    private let store: Store
    private let state = Mutex(State())

    private struct State {
        var runner: Task<Void, Never>?
        /// Discovery configs published on the current connection.
        var announcedDevices: Set<String> = []
        var announcedRegions: Set<String> = []
        var regionsRevision: Int64 = -1
        /// The store's erasure count when this connection last looked for erased devices.
        var erasures: Int64 = -1
    }

    package init(
        name: String, configuration: MQTTConfiguration, prefix: String, discovery: Bool, batchSize: Int,
        maxAttempts: Int, store: Store, logger: Logger
    ) {
        self.name = name
        self.prefix = prefix
        self.discovery = discovery
        self.batchSize = batchSize
        self.maxAttempts = maxAttempts
        self.store = store
        self.logger = logger
        self.client = MQTTClient(configuration: configuration, logger: logger)
    }

    package var type: String { "mqtt" }
    package var cursorKey: String { "sink:" + name }
    package var leaseName: String { "sink:" + name }

    package func deliver(_ batch: [FeedEvent], attempt: Int) async -> SinkReport {
        startClient()
        var confirmed = 0
        do {
            for item in batch {
                try await client.publish(
                    topic: "\(prefix)/events/\(Self.topicLevel(item.event.device))",
                    payload: Array(EventExport.json(item.event).canonicalText().utf8))
                confirmed += 1
            }
            try await publishPresence(
                devices: Set(batch.map(\.event.device)), regions: Set(batch.compactMap(\.event.region)))
        } catch {
            return SinkReport(confirmed: confirmed, failure: .unreachable("MQTT broker: \(error)"))
        }
        return .all(batch)
    }

    package func shutdown() async {
        state.withLock { $0.runner }?.cancel()
    }

    /// Runs the client (connects, reconnects) from the first delivery until shutdown.
    private func startClient() {
        state.withLock { state in
            guard state.runner == nil else { return }
            let client = self.client
            state.runner = Task {
                await client.run(onMessage: { _ in }) { [weak self] event in
                    // A new connection announces everything again.
                    if case .connected = event { self?.forgetAnnouncements() }
                }
            }
        }
    }

    private func forgetAnnouncements() {
        state.withLock { state in
            state.announcedDevices = []
            state.announcedRegions = []
            state.regionsRevision = -1
            state.erasures = -1
        }
    }

    /// On a new connection, and after each erasure: the entities and retained state of devices
    /// the store no longer knows removed from the broker.
    private func sweepIfDevicesErased() async {
        do {
            let count = try await store.erasureCount()
            guard state.withLock({ $0.erasures }) != count else { return }
            let removed = try await sweepErasedDevices(known: try await store.knownDevices())
            state.withLock { $0.erasures = count }
            if !removed.isEmpty {
                logger.info(
                    "MQTT sink removed the Home Assistant entities of erased devices",
                    metadata: ["sink": "\(name)", "devices": "\(removed.count)"])
            }
        } catch {
            logger.warning(
                "MQTT sink could not read back its device trackers; entities of erased devices may stay",
                metadata: ["sink": "\(name)", "error": "\(error)"])
        }
    }

    /// Retained state of the batch's devices and regions, and discovery configs as needed.
    private func publishPresence(devices: Set<String>, regions: Set<String>) async throws {
        let regionNames = try await store.regions().reduce(into: [String: String]()) { $0[$1.id] = $1.name ?? $1.id }
        var deviceNames: [String: String] = [:]
        for entry in try await store.roster().entries.values { deviceNames[entry.device] = entry.name }
        if discovery {
            try await announceRegions(regionNames)
            await sweepIfDevicesErased()
        }
        let presence = try await store.presence(devices: devices, regions: regions)
        for device in devices.sorted() {
            let inside = presence.regionsOf[device] ?? []
            let level = Self.topicLevel(device)
            let stateJSON: JSONValue = .object([
                "device": .string(device),
                "regions": .array(inside.map { .object(["id": .string($0), "name": .string(regionNames[$0] ?? $0)]) }),
            ])
            try await publish("\(prefix)/devices/\(level)/state", try JSONValueEncoder.canonicalText(stateJSON))
            guard discovery else { continue }
            if !state.withLock({ $0.announcedDevices.contains(device) }) {
                let config: JSONValue = .object([
                    "name": .string(deviceNames[device] ?? device),
                    "unique_id": .string("fencepost_\(Self.objectID(device))"),
                    "object_id": .string("fencepost_\(Self.objectID(device))"),
                    "state_topic": .string("\(prefix)/devices/\(level)/location"), "source_type": .string("gps"),
                    "payload_home": .string("home"), "payload_not_home": .string("not_home"),
                ])
                try await publish(
                    "homeassistant/device_tracker/fencepost_\(Self.objectID(device))/config",
                    try JSONValueEncoder.canonicalText(config))
                state.withLock { _ = $0.announcedDevices.insert(device) }
            }
            let location = inside.first.map { regionNames[$0] ?? $0 } ?? "not_home"
            try await publish("\(prefix)/devices/\(level)/location", location)
        }
        guard discovery else { return }
        for region in regions.sorted() where regionNames[region] != nil {
            let occupied = !(presence.devicesIn[region] ?? []).isEmpty
            try await publish("\(prefix)/regions/\(Self.topicLevel(region))/presence", occupied ? "ON" : "OFF")
        }
    }

    /// A presence `binary_sensor` per region, once per connection and whenever the regions
    /// change; an empty config for each region announced before and gone now: on this
    /// connection, or found on the broker (regions removed while serve was down or away).
    private func announceRegions(_ names: [String: String]) async throws {
        let revision = try await store.regionsRevision()
        let (known, announced) = state.withLock { ($0.regionsRevision, $0.announcedRegions) }
        guard revision != known else { return }
        if known == -1 {
            do {
                let removed = try await sweepRemovedRegions(keeping: Set(names.keys))
                if !removed.isEmpty {
                    logger.info(
                        "MQTT sink removed the Home Assistant entities of regions no longer monitored",
                        metadata: ["sink": "\(name)", "regions": "\(removed.joined(separator: " "))"])
                }
            } catch {
                logger.warning(
                    "MQTT sink could not read back its Home Assistant configs; entities of removed regions may stay",
                    metadata: ["sink": "\(name)", "error": "\(error)"])
            }
        }
        for region in names.keys.sorted() {
            let config: JSONValue = .object([
                "name": .string("\(names[region] ?? region) presence"),
                "unique_id": .string("fencepost_region_\(Self.objectID(region))"),
                "object_id": .string("fencepost_region_\(Self.objectID(region))"),
                "state_topic": .string("\(prefix)/regions/\(Self.topicLevel(region))/presence"),
                "device_class": .string("presence"), "payload_on": .string("ON"), "payload_off": .string("OFF"),
            ])
            try await publish(
                "homeassistant/binary_sensor/fencepost_region_\(Self.objectID(region))/config",
                try JSONValueEncoder.canonicalText(config))
        }
        for gone in announced.subtracting(names.keys).sorted() {
            try await publish("homeassistant/binary_sensor/fencepost_region_\(Self.objectID(gone))/config", "")
        }
        state.withLock { state in
            state.regionsRevision = revision
            state.announcedRegions = Set(names.keys)
        }
    }

    func publish(_ topic: String, _ payload: String) async throws {
        try await client.publish(topic: topic, payload: Array(payload.utf8), retain: true)
    }

    /// An id as one topic level: `/`, `+` and `#` would split it or be wildcards.
    static func topicLevel(_ id: String) -> String {
        String(id.map { $0 == "/" || $0 == "+" || $0 == "#" ? "_" : $0 })
    }

    /// An id as Home Assistant's object ids want it: letters, digits and `_`.
    static func objectID(_ id: String) -> String {
        String(id.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    }
}
