/// A message delivered to the application, to be acknowledged with
/// ``MQTTClient/acknowledge(_:)`` once the application is done with it (for QoS 1: the PUBACK
/// goes out then, not on receipt).
package struct MQTTMessage: Sendable {
    package var publish: MQTTPublish
    /// The connection it came on: an acknowledgement for an earlier connection is not sent
    /// (the broker delivers the message again on the new one).
    let connection: UInt64

    package var topic: String { publish.topic }
    package var payload: [UInt8] { publish.payload }
}

/// What the client tells its owner about its connection.
package enum MQTTConnectionEvent: Sendable {
    /// Connected and subscribed; `sessionPresent` when the broker kept the session.
    case connected(sessionPresent: Bool)
    /// The connection ended or could not be made, with the reason.
    case disconnected(reason: String)
}

/// Why a publish could not be completed.
package enum MQTTPublishError: Error, Equatable {
    /// No connection at the time.
    case notConnected
    /// The connection ended before the broker acknowledged (it may or may not have the message).
    case connectionLost
}
