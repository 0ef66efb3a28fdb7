import FencepostCore
import FencepostFormats
import FencepostGeometry
import FencepostIngest
import FencepostMQTT
import FencepostStore
import Logging
import ServiceLifecycle

/// OwnTracks over MQTT: subscribes with a persistent session and ingests each location through
/// the live writer, acknowledging a message only once its fixes are committed. A `serve` killed
/// in between loses nothing: the broker delivers the message again, and its fixes, already
/// stored, are dropped as seen.
///
/// Messages are taken in batches (all that arrived while the last batch committed, at most
/// the client's window), in the order received, so one commit serves many and a device's
/// fixes reach the writer in order. A malformed message is logged, counted as refused and
/// acknowledged (sent again it would be refused again); other types are counted and acknowledged.
/// After a commit, a device whose monitored set has changed since it was last sent gets the
/// `setWaypoints` command on `owntracks/USER/DEVICE/cmd` (``OwnTracksWaypoints``, shared with
/// the HTTP route).
struct MQTTIngestJob: Service {
    let client: MQTTClient
    let ingestor: LiveIngestor
    let keys: OwnTracksKeys
    let metrics: ServiceMetrics
    /// Where `transition` messages go (a device's own enters and exits).
    let transitions: TransitionRecorder
    /// The monitored sets sent to devices; nil when the config turns `setWaypoints` off.
    var waypoints: OwnTracksWaypoints?
    var planning: PlanningRegions?
    let logger: Logger
    static let protocolName = "owntracks_mqtt"

    func run() async throws {
        let queue = BatchingQueue<MQTTMessage>()
        let metrics = self.metrics
        metrics.recordMQTTConnected(false)
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { tasks in
                tasks.addTask {
                    await client.run(
                        onMessage: { message in await queue.append([message]) },
                        onEvent: { event in
                            if case .connected = event {
                                metrics.recordMQTTConnected(true)
                            } else {
                                metrics.recordMQTTConnected(false)
                            }
                        })
                    await queue.close()
                }
                while let batch = await queue.take() {
                    metrics.recordMQTTInFlight(client.inFlight)
                    await handle(batch)
                }
            }
        }
        metrics.recordMQTTConnected(false)
    }

    /// Reads, commits and acknowledges one batch of messages.
    private func handle(_ batch: [MQTTMessage]) async {
        var fixes: [Fix] = []
        var reported: [(device: String, transitions: [ReportedTransition])] = []
        var types: [String: Int] = [:]
        /// Per device, its newest fix and the topic it came on.
        var newest: [String: (topic: String, fix: Fix)] = [:]
        for message in batch {
            do {
                let read = try OwnTracksMessage(topic: message.topic, payload: message.payload, keys: keys)
                fixes += read.fixes
                if !read.transitions.isEmpty { reported.append((read.device, read.transitions)) }
                types[read.type, default: 0] += 1
                for fix in read.fixes where fix.time >= newest[fix.device]?.fix.time ?? -.infinity {
                    newest[fix.device] = (message.topic, fix)
                }
            } catch {
                logger.warning(
                    "MQTT message refused", metadata: ["topic": "\(message.topic)", "reason": "\(error)"])
                metrics.recordRefusedMessage(protocol: Self.protocolName)
            }
        }
        if !fixes.isEmpty {
            guard await commit(fixes) else { return }
        }
        for (device, transitions) in reported {
            guard await record(transitions, device: device) else { return }
        }
        for message in batch { await client.acknowledge(message) }
        for (type, count) in types { metrics.recordMessages(protocol: Self.protocolName, type: type, count: count) }
        metrics.recordMQTTInFlight(client.inFlight)
        await sendWaypoints(newest)
    }

    /// Publishes `setWaypoints` to the devices whose monitored set changed. The publishes are
    /// not waited for here: their PUBACKs come in the same stream as the messages, which is not
    /// read while the window is full, and only taking the next batch opens it. A publish that
    /// fails is not retried: what was sent is forgotten, and the device's next location plans
    /// and sends again.
    private func sendWaypoints(_ newest: [String: (topic: String, fix: Fix)]) async {
        guard let waypoints, let planning else { return }
        for (device, latest) in newest {
            let command: JSONValue?
            do {
                command = try await waypoints.command(
                    for: device, at: Position(lon: latest.fix.lon, lat: latest.fix.lat), planning: planning)
            } catch {
                logger.warning("setWaypoints not planned", metadata: ["device": "\(device)", "error": "\(error)"])
                continue
            }
            guard let command else { continue }
            let (client, logger) = (self.client, self.logger)
            Task {
                do {
                    try await client.publish(
                        topic: latest.topic + "/cmd", payload: Array(command.canonicalText().utf8))
                } catch {
                    logger.warning("setWaypoints not sent", metadata: ["device": "\(device)", "error": "\(error)"])
                    waypoints.forget(device)
                }
            }
        }
    }

    /// Writes a device's reported transitions, trying again while the store fails; one that
    /// names a region not monitored (or not the device's) is logged and counted as refused, and
    /// acknowledged like any malformed message. False when the service is stopping.
    private func record(_ reported: [ReportedTransition], device: String) async -> Bool {
        while !Task.isCancelled {
            do {
                _ = try await transitions.record(reported, device: device)
                return true
            } catch let refusal as TransitionRefusal {
                logger.warning("MQTT transition refused", metadata: ["device": "\(device)", "reason": "\(refusal)"])
                metrics.recordRefusedMessage(protocol: Self.protocolName)
                return true
            } catch {
                logger.error(
                    "MQTT transitions not committed; trying again",
                    metadata: ["error": "\(error)", "device": "\(device)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
        return false
    }

    /// Ingests the fixes, trying again while the store fails; false when the writer is
    /// stopping (nothing is acknowledged then: the broker sends the messages again).
    private func commit(_ fixes: [Fix]) async -> Bool {
        while !Task.isCancelled {
            do {
                _ = try await ingestor.ingest(fixes)
                return true
            } catch is LiveIngestor.ShuttingDown {
                return false
            } catch {
                logger.error(
                    "MQTT messages not committed; trying again",
                    metadata: ["error": "\(error)", "fixes": "\(fixes.count)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
        return false
    }
}
