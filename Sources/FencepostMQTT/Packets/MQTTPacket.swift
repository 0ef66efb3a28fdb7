/// The delivery guarantee of a message. QoS 2 is not offered: subscriptions ask for at most 1,
/// and a QoS 2 publish from the broker is a protocol error.
package enum MQTTQoS: UInt8, Sendable, Equatable {
    case atMostOnce = 0
    case atLeastOnce = 1
}

/// An application message, as PUBLISH carries it.
package struct MQTTPublish: Sendable, Equatable {
    package var topic: String
    package var payload: [UInt8]
    package var qos: MQTTQoS
    /// Present exactly when `qos` is at least once.
    package var packetID: UInt16?
    /// The broker sends it again (an earlier delivery was not acknowledged).
    package var duplicate: Bool
    package var retain: Bool

    package init(
        topic: String, payload: [UInt8], qos: MQTTQoS, packetID: UInt16? = nil, duplicate: Bool = false,
        retain: Bool = false
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.packetID = packetID
        self.duplicate = duplicate
        self.retain = retain
    }
}

/// CONNECT's fields (MQTT 3.1.1, section 3.1); no will message.
package struct MQTTConnect: Sendable, Equatable {
    package var clientID: String
    package var username: String?
    package var password: String?
    /// False asks the broker to keep the session (subscriptions, unacknowledged messages)
    /// across connections.
    package var cleanSession: Bool
    package var keepAliveSeconds: UInt16

    package init(
        clientID: String, username: String? = nil, password: String? = nil, cleanSession: Bool,
        keepAliveSeconds: UInt16
    ) {
        self.clientID = clientID
        self.username = username
        self.password = password
        self.cleanSession = cleanSession
        self.keepAliveSeconds = keepAliveSeconds
    }
}

/// The control packets this client sends or receives (MQTT 3.1.1). QoS 2's PUBREC, PUBREL and
/// PUBCOMP and UNSUBSCRIBE are not used.
package enum MQTTPacket: Sendable, Equatable {
    case connect(MQTTConnect)
    /// `returnCode` 0 is accepted; 1–5 are the refusals of section 3.2.2.3.
    case connack(sessionPresent: Bool, returnCode: UInt8)
    case publish(MQTTPublish)
    case puback(packetID: UInt16)
    case subscribe(packetID: UInt16, filters: [MQTTSubscription])
    /// One return code per filter: the granted QoS, or 0x80 for a refusal.
    case suback(packetID: UInt16, returnCodes: [UInt8])
    case pingreq
    case pingresp
    case disconnect

    /// The packet type, the high nibble of the first byte.
    package enum Kind: UInt8, Sendable {
        case connect = 1, connack, publish, puback, pubrec, pubrel, pubcomp, subscribe, suback, unsubscribe,
            unsuback, pingreq, pingresp, disconnect
    }

    package var kind: Kind {
        switch self {
        case .connect: .connect
        case .connack: .connack
        case .publish: .publish
        case .puback: .puback
        case .subscribe: .subscribe
        case .suback: .suback
        case .pingreq: .pingreq
        case .pingresp: .pingresp
        case .disconnect: .disconnect
        }
    }
}

/// A topic filter and the QoS asked for it.
package struct MQTTSubscription: Sendable, Equatable {
    package var filter: String
    package var qos: MQTTQoS

    package init(filter: String, qos: MQTTQoS) {
        self.filter = filter
        self.qos = qos
    }
}

/// A packet that breaks the protocol or the configured bounds: the connection is closed with
/// this reason (logged), never a crash.
package struct MQTTProtocolError: Error, Equatable, CustomStringConvertible {
    package var reason: String

    package init(_ reason: String) {
        self.reason = reason
    }

    package var description: String { reason }
}
