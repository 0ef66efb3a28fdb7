import FencepostCore
import FencepostMQTT
import Foundation
import Synchronization

extension MQTTSink {
    /// Removes the presence sensors of regions this sink announced before (in an earlier run,
    /// or before a reconnection) that `regions` no longer has: the retained `binary_sensor`
    /// configs are read back from the broker and each gone region's gets an empty config, which
    /// Home Assistant takes as "remove the entity". Only configs whose state topic is under
    /// this sink's prefix count: other sinks' entities on the broker are theirs. Returns the
    /// object ids of the regions removed.
    func sweepRemovedRegions(keeping regions: Set<String>) async throws -> [String] {
        let found = try await retainedConfigs(component: "binary_sensor", statePrefix: "\(prefix)/regions/")
        let keep = Set(regions.map(Self.objectID))
        let gone = Set(found.keys.compactMap(Self.regionObjectID)).subtracting(keep).sorted()
        for objectID in gone {
            try await publish("homeassistant/binary_sensor/fencepost_region_\(objectID)/config", "")
        }
        return gone
    }

    /// Removes the `device_tracker` of each device this sink announced that `known` no longer
    /// has (an erased device): its config emptied (Home Assistant removes the entity), and its
    /// retained state and location on this sink's prefix cleared, so the broker keeps nothing
    /// naming it. Returns the devices' topic levels.
    func sweepErasedDevices(known: Set<String>) async throws -> [String] {
        let statePrefix = "\(prefix)/devices/"
        let found = try await retainedConfigs(component: "device_tracker", statePrefix: statePrefix)
        let keep = Set(known.map(Self.topicLevel))
        var gone: [String] = []
        for (topic, stateTopic) in found.sorted(by: { $0.key < $1.key }) {
            // `PREFIX/devices/LEVEL/location`
            let level = String(stateTopic.dropFirst(statePrefix.count).split(separator: "/").first ?? "")
            guard !level.isEmpty, !keep.contains(level) else { continue }
            try await publish(topic, "")
            try await publish("\(statePrefix)\(level)/state", "")
            try await publish("\(statePrefix)\(level)/location", "")
            gone.append(level)
        }
        return gone
    }

    /// The retained discovery configs of `component` on the broker whose state topic is under
    /// `statePrefix` (this sink's own), by config topic, with their state topics: a
    /// short-lived client subscribes, and the read ends when a probe it publishes to itself
    /// comes back (the broker sends a subscription's retained messages before anything
    /// published after the subscription).
    private func retainedConfigs(component: String, statePrefix: String) async throws -> [String: String] {
        let probe = "\(prefix)/sweep/\(UUID().uuidString)"
        var configuration = client.configuration
        configuration.clientID += "-sweep"
        configuration.cleanSession = true
        configuration.subscriptions = [
            MQTTSubscription(filter: "homeassistant/\(component)/+/config", qos: .atMostOnce),
            MQTTSubscription(filter: probe, qos: .atMostOnce),
        ]
        let reader = MQTTClient(configuration: configuration, logger: logger)
        let sweep = Sweep()
        let runner = Task {
            await reader.run(
                onMessage: { message in
                    if message.topic == probe {
                        sweep.state.withLock { $0.probed = true }
                        return
                    }
                    guard message.publish.retain, let config = try? JSONParser.parse(message.publish.payload),
                        let stateTopic = config["state_topic"]?.stringValue, stateTopic.hasPrefix(statePrefix)
                    else { return }
                    sweep.state.withLock { $0.found[message.topic] = stateTopic }
                },
                onEvent: { event in
                    if case .connected = event { sweep.state.withLock { $0.connected = true } }
                })
        }
        defer { runner.cancel() }
        try await sweep.wait(for: "connect") { $0.connected }
        try await reader.publish(topic: probe, payload: [])
        try await sweep.wait(for: "the probe to come back") { $0.probed }
        return sweep.state.withLock { $0.found }
    }

    /// The region's object id in a config topic of ours
    /// (`homeassistant/binary_sensor/fencepost_region_OBJECTID/config`), or nil.
    static func regionObjectID(configTopic: String) -> String? {
        let levels = configTopic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 4, levels[3] == "config", levels[2].hasPrefix("fencepost_region_") else { return nil }
        return String(levels[2].dropFirst("fencepost_region_".count))
    }
}

/// What the sweep's client has seen so far.
private final class Sweep: Sendable {
    struct State {
        var connected = false
        var probed = false
        /// Config topic → state topic.
        var found: [String: String] = [:]
    }
    let state = Mutex(State())

    /// Waits (at most 10 s) until `condition` holds.
    func wait(for what: String, _ condition: (State) -> Bool) async throws {
        for _ in 0..<1_000 {
            if state.withLock({ condition($0) }) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw SweepTimeout(what: what)
    }
}

struct SweepTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "no answer from the broker in 10 s waiting for \(what)" }
}
