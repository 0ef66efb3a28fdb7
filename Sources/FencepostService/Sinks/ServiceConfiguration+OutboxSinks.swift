import AsyncHTTPClient
import FencepostBrokers
import FencepostMQTT
import FencepostStore
import Logging
import NIOCore

extension ServiceConfiguration {
    /// The sinks the configuration switches on: its webhooks (unless `jobs.webhooks` is false),
    /// then its brokers, in the file's order.
    func outboxSinks(store: Store, logger: Logger) throws(ConfigurationError) -> [any OutboxSink] {
        var sinks: [any OutboxSink] = []
        if webhooksEnabled {
            sinks += webhooks.map { webhook in
                WebhookSink(
                    webhook: webhook, client: HTTPClient.shared, store: store, maxAttempts: webhookMaxAttempts,
                    timeout: .nanoseconds(Int64(webhookTimeoutSeconds * 1e9)))
            }
        }
        for sink in self.sinks {
            let timeout = TimeAmount.nanoseconds(Int64(sink.timeoutSeconds * 1e9))
            switch sink.target {
            case .redis(let url, let stream):
                switch BrokerEndpoint.parse(url, scheme: "redis", defaultPort: 6379) {
                case .success(let endpoint):
                    sinks.append(
                        RedisStreamSink(
                            name: sink.name, endpoint: endpoint, stream: stream, batchSize: sink.batchSize,
                            maxAttempts: sink.maxAttempts, timeout: timeout))
                case .failure(let error):
                    throw ConfigurationError(path: "", keyPath: "sinks", reason: "sink \"\(sink.name)\": \(error)")
                }
            case .mqtt(let target):
                do {
                    let endpoint = try MQTTConfiguration.endpoint(of: target.url).get()
                    let configuration = MQTTConfiguration(
                        host: endpoint.host, port: endpoint.port, tls: endpoint.tls, clientID: target.clientID,
                        username: target.username, password: target.password, cleanSession: true,
                        reconnectCap: .seconds(5))
                    sinks.append(
                        MQTTSink(
                            name: sink.name, configuration: configuration, prefix: target.topicPrefix,
                            discovery: target.homeAssistantDiscovery, batchSize: sink.batchSize,
                            maxAttempts: sink.maxAttempts, store: store, logger: logger))
                } catch {
                    throw ConfigurationError(path: "", keyPath: "sinks", reason: "sink \"\(sink.name)\": \(error)")
                }
            case .nats(let url, let subject, let stream):
                do {
                    let endpoint = try BrokerEndpoint.parse(url, scheme: "nats", defaultPort: 4222).get()
                    sinks.append(
                        NATSJetStreamSink(
                            name: sink.name, endpoint: endpoint, subject: try NATSSubjectTemplate(subject),
                            stream: stream, batchSize: sink.batchSize, maxAttempts: sink.maxAttempts, timeout: timeout))
                } catch {
                    throw ConfigurationError(path: "", keyPath: "sinks", reason: "sink \"\(sink.name)\": \(error)")
                }
            }
        }
        return sinks
    }
}
