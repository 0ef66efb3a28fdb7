package import FencepostMQTT

extension ServiceConfiguration {
    /// `"mqtt": {"url": "mqtt://host:1883", "username", "password", "client_id", "topics": [...],
    /// "qos": 1, "keys": {"user": "secret"}}`: `serve` subscribes to OwnTracks' topics with a
    /// persistent session and acknowledges each message once its fixes are committed.
    /// Messages have no token: the broker's ACLs say who may publish where.
    package struct MQTT: Sendable, Equatable {
        package var url: String
        package var username: String?
        package var password: String?
        /// The session's name at the broker: it must stay the same across restarts for the
        /// broker to keep what was not acknowledged.
        package var clientID: String
        package var topics: [String]
        package var qos: Int
        /// OwnTracks' encryption keys, by user (or `user/device`): the secret the app is given.
        package var keys: [String: String]

        package init(
            url: String, username: String? = nil, password: String? = nil, clientID: String = "fencepost",
            topics: [String] = ["owntracks/+/+"], qos: Int = 1, keys: [String: String] = [:]
        ) {
            self.url = url
            self.username = username
            self.password = password
            self.clientID = clientID
            self.topics = topics
            self.qos = qos
            self.keys = keys
        }

        /// The client's settings for this broker.
        package func clientConfiguration() throws(MQTTProtocolError) -> MQTTConfiguration {
            let endpoint = try MQTTConfiguration.endpoint(of: url).get()
            return MQTTConfiguration(
                host: endpoint.host, port: endpoint.port, tls: endpoint.tls, clientID: clientID, username: username,
                password: password,
                subscriptions: topics.map { MQTTSubscription(filter: $0, qos: qos == 0 ? .atMostOnce : .atLeastOnce) })
        }
    }
}

extension ServiceConfiguration.MQTT {
    init(reading config: ConfigObject) throws(ConfigurationError) {
        try config.allowOnly(["url", "username", "password", "client_id", "topics", "qos", "keys"])
        let defaults = Self(url: "")
        self.init(
            url: try config.requiredString("url"), username: try config.string("username"),
            password: try config.string("password"), clientID: try config.string("client_id") ?? defaults.clientID,
            topics: try config.strings("topics") ?? defaults.topics,
            qos: try config.integer("qos", in: 0...1) ?? defaults.qos, keys: try config.stringMap("keys") ?? [:])
        do {
            _ = try clientConfiguration()
        } catch {
            throw config.invalid("url", error.reason)
        }
        guard !clientID.isEmpty, clientID.utf8.count <= 65_535 else {
            throw config.invalid("client_id", "must not be empty")
        }
        guard !topics.isEmpty, topics.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 65_535 }) else {
            throw config.invalid("topics", "must list at least one topic filter, none empty")
        }
        if password != nil, username == nil { throw config.invalid("password", "given without username") }
        for (user, key) in keys where key.isEmpty || user.isEmpty {
            throw config.invalid("keys", "a key and its user must not be empty")
        }
    }
}
