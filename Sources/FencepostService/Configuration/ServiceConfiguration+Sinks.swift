import FencepostBrokers
import FencepostMQTT

extension ServiceConfiguration {
    /// `"sinks": [{"type": "redis", ...}, ...]`: where events go besides webhooks, each fed
    /// from the outbox in order with its own cursor (``SinkDeliveryJob``).
    package struct Sink: Sendable, Equatable {
        package enum Target: Sendable, Equatable {
            /// `{"type": "redis", "url": "redis://host:6379", "stream": "fencepost:events"}`.
            case redis(url: String, stream: String)
            /// `{"type": "nats", "url": "nats://host:4222", "subject": "fencepost.events.{device}",
            /// "stream": "FENCEPOST"}`.
            case nats(url: String, subject: String, stream: String)
            /// `{"type": "mqtt", "url": "mqtt://host:1883", "topic_prefix": "fencepost", "qos": 1,
            /// "homeassistant_discovery": true}`.
            case mqtt(MQTTTarget)
        }

        package struct MQTTTarget: Sendable, Equatable {
            package var url: String
            package var topicPrefix: String
            package var homeAssistantDiscovery: Bool
            package var clientID: String
            package var username: String?
            package var password: String?
        }

        /// Names the sink's cursor, dead letters and metrics; defaults to the type.
        package var name: String
        package var target: Target
        /// Events sent before waiting for the broker's confirmations.
        package var batchSize: Int
        /// Tries of one event the broker refuses before it is dead-lettered.
        package var maxAttempts: Int
        /// Seconds the broker may take to confirm a batch before the connection is made again.
        package var timeoutSeconds: Double

        package init(
            name: String, target: Target, batchSize: Int = 500, maxAttempts: Int = 8, timeoutSeconds: Double = 10
        ) {
            self.name = name
            self.target = target
            self.batchSize = batchSize
            self.maxAttempts = maxAttempts
            self.timeoutSeconds = timeoutSeconds
        }

        package var type: String {
            switch target {
            case .redis: "redis"
            case .nats: "nats"
            case .mqtt: "mqtt"
            }
        }

        static let types = ["redis", "nats", "mqtt"]
    }
}

extension ServiceConfiguration.Sink {
    init(reading config: ConfigObject) throws(ConfigurationError) {
        let type = try config.requiredString("type")
        guard Self.types.contains(type) else {
            throw config.invalid("type", "unknown sink type \"\(type)\" (known: \(Self.types.joined(separator: ", ")))")
        }
        let common = ["type", "name", "batch_size", "max_attempts", "timeout_seconds"]
        let name = try config.string("name") ?? type
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) }) else {
            throw config.invalid("name", "a sink name is letters, digits, '.', '_' or '-': \"\(name)\"")
        }
        // Each error names the sink as well as the key.
        func invalid(_ key: String, _ reason: String) -> ConfigurationError {
            config.invalid(key, "sink \"\(name)\" (\(type)): \(reason)")
        }
        let target: Target
        switch type {
        case "mqtt":
            try config.allowOnly(
                common + ["url", "topic_prefix", "qos", "homeassistant_discovery", "client_id", "username", "password"])
            let url = try config.requiredString("url")
            if case .failure(let error) = MQTTConfiguration.endpoint(of: url) { throw invalid("url", error.reason) }
            guard (try config.integer("qos", in: 0...2) ?? 1) == 1 else {
                throw invalid("qos", "must be 1: the cursor advances on the broker's PUBACK")
            }
            let prefix = try config.string("topic_prefix") ?? "fencepost"
            guard !prefix.isEmpty, !prefix.contains(where: { $0 == "+" || $0 == "#" }), !prefix.hasSuffix("/") else {
                throw invalid("topic_prefix", "must be a topic without wildcards or a trailing '/': \"\(prefix)\"")
            }
            let username = try config.string("username")
            let password = try config.string("password")
            if password != nil, username == nil { throw invalid("password", "given without username") }
            target = .mqtt(
                MQTTTarget(
                    url: url, topicPrefix: prefix,
                    homeAssistantDiscovery: try config.bool("homeassistant_discovery") ?? false,
                    clientID: try config.string("client_id") ?? "fencepost-sink-\(name)", username: username,
                    password: password))
        case "nats":
            try config.allowOnly(common + ["url", "subject", "stream"])
            let url = try config.requiredString("url")
            if case .failure(let error) = BrokerEndpoint.parse(url, scheme: "nats", defaultPort: 4222) {
                throw invalid("url", error.description)
            }
            let subject = try config.string("subject") ?? "fencepost.events.{device}"
            do {
                _ = try NATSSubjectTemplate(subject)
            } catch {
                throw invalid("subject", "is not a NATS subject: \(error)")
            }
            let stream = try config.string("stream") ?? "FENCEPOST"
            guard !stream.isEmpty,
                stream.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
            else { throw invalid("stream", "a JetStream stream name is letters, digits, '_' or '-': \"\(stream)\"") }
            target = .nats(url: url, subject: subject, stream: stream)
        default:
            try config.allowOnly(common + ["url", "stream"])
            let url = try config.requiredString("url")
            if case .failure(let error) = BrokerEndpoint.parse(url, scheme: "redis", defaultPort: 6379) {
                throw invalid("url", error.description)
            }
            let stream = try config.string("stream") ?? "fencepost:events"
            guard !stream.isEmpty else { throw invalid("stream", "must not be empty") }
            target = .redis(url: url, stream: stream)
        }
        let defaults = Self(name: name, target: target)
        self.init(
            name: name, target: target,
            batchSize: try config.integer("batch_size", in: 1...10_000) ?? defaults.batchSize,
            maxAttempts: try config.integer("max_attempts", in: 1...1_000) ?? defaults.maxAttempts,
            timeoutSeconds: try config.number("timeout_seconds", in: 0.001...3_600) ?? defaults.timeoutSeconds)
    }
}
