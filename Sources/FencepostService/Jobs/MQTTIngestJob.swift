import FencepostCore
import FencepostFormats
import FencepostIngest
import FencepostMQTT
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
struct MQTTIngestJob: Service {
    let client: MQTTClient
    let ingestor: LiveIngestor
    let keys: OwnTracksKeys
    let metrics: ServiceMetrics
    let recentTracks: RecentTracks
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
        var types: [String: Int] = [:]
        for message in batch {
            do {
                let read = try OwnTracksMessage(topic: message.topic, payload: message.payload, keys: keys)
                fixes += read.fixes
                types[read.type, default: 0] += 1
            } catch {
                logger.warning(
                    "MQTT message refused", metadata: ["topic": "\(message.topic)", "reason": "\(error)"])
                metrics.recordRefusedMessage(protocol: Self.protocolName)
            }
        }
        if !fixes.isEmpty {
            guard await commit(fixes) else { return }
        }
        for message in batch { await client.acknowledge(message) }
        for (type, count) in types { metrics.recordMessages(protocol: Self.protocolName, type: type, count: count) }
        metrics.recordMQTTInFlight(client.inFlight)
    }

    /// Ingests the fixes, trying again while the store fails; false when the writer is
    /// stopping (nothing is acknowledged then: the broker sends the messages again).
    private func commit(_ fixes: [Fix]) async -> Bool {
        while !Task.isCancelled {
            do {
                _ = try await ingestor.ingest(fixes)
                recentTracks.record(fixes)
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
