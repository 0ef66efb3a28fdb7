/// Where and how the client connects, and the bounds it keeps.
package struct MQTTConfiguration: Sendable, Equatable {
    package var host: String
    package var port: Int
    /// TLS (`mqtts://`), checked against the system's trust roots and the host name.
    package var tls: Bool
    package var clientID: String
    package var username: String?
    package var password: String?
    /// The filters subscribed to after each connection (a persistent session keeps them too).
    package var subscriptions: [MQTTSubscription]
    /// False keeps the session at the broker: what was not acknowledged is sent again on the
    /// next connection.
    package var cleanSession: Bool
    /// A PINGREQ goes out this often; with `pingTimeout`, the bound after which a silent
    /// (half-open) connection is given up and made again.
    package var keepAlive: Duration
    package var pingTimeout: Duration
    /// The most messages of QoS 1 delivered and not yet acknowledged: past it the client stops
    /// reading from the socket until the application acknowledges one.
    package var receiveMaximum: Int
    /// A packet whose remaining length is past this many bytes closes the connection.
    package var maximumPacketSize: Int
    /// Waits between connection attempts: doubling from `first` up to `cap`, with jitter.
    package var reconnectFirst: Duration
    package var reconnectCap: Duration

    package init(
        host: String, port: Int, tls: Bool = false, clientID: String, username: String? = nil,
        password: String? = nil, subscriptions: [MQTTSubscription] = [], cleanSession: Bool = false,
        keepAlive: Duration = .seconds(30), pingTimeout: Duration = .seconds(10), receiveMaximum: Int = 100,
        maximumPacketSize: Int = 1 << 20, reconnectFirst: Duration = .milliseconds(200),
        reconnectCap: Duration = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.clientID = clientID
        self.username = username
        self.password = password
        self.subscriptions = subscriptions
        self.cleanSession = cleanSession
        self.keepAlive = keepAlive
        self.pingTimeout = pingTimeout
        self.receiveMaximum = receiveMaximum
        self.maximumPacketSize = maximumPacketSize
        self.reconnectFirst = reconnectFirst
        self.reconnectCap = reconnectCap
    }

    /// `mqtt://host[:1883]` or `mqtts://host[:8883]`; nil with the reason otherwise.
    package static func endpoint(of url: String) -> Result<(host: String, port: Int, tls: Bool), MQTTProtocolError> {
        let tls: Bool
        let rest: Substring
        if url.hasPrefix("mqtt://") {
            (tls, rest) = (false, url.dropFirst(7))
        } else if url.hasPrefix("mqtts://") {
            (tls, rest) = (true, url.dropFirst(8))
        } else {
            return .failure(MQTTProtocolError("not an mqtt:// or mqtts:// URL: \(url)"))
        }
        let authority = rest.hasSuffix("/") ? rest.dropLast() : rest
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@") else {
            return .failure(MQTTProtocolError("an MQTT URL is mqtt://host:port, with no path or user: \(url)"))
        }
        var host = String(authority)
        var port = tls ? 8883 : 1883
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            guard let parsed = Int(authority[authority.index(after: colon)...]), (1...65_535).contains(parsed) else {
                return .failure(MQTTProtocolError("the port of \(url) is not a number from 1 to 65535"))
            }
            port = parsed
            host = String(authority[..<colon])
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return .failure(MQTTProtocolError("no host in \(url)")) }
        return .success((host, port, tls))
    }
}
