package import FencepostCore
package import FencepostFormats
import Foundation

/// One OwnTracks message as MQTT delivers it: its topic names the device
/// (`owntracks/USER/DEVICE`, sub-topics such as `…/event` or `…/cmd` below it) and its payload
/// is a JSON object with a `_type`, maybe encrypted (``OwnTracksCipher``).
package struct OwnTracksMessage {
    /// The message's `_type` (`location`, `transition`, `waypoints`, `lwt`, `card`, …), or
    /// `empty` for a payload of no bytes (how a retained message is cleared).
    package var type: String
    /// The fixes of a location on a device's own topic; none for everything else.
    package var fixes: [Fix]
    /// The device (`USER/DEVICE`) the topic names.
    package var device: String = ""
    /// A transition's report, on the device's topic or its `…/event` sub-topic (where the apps
    /// publish them); none for everything else.
    package var transitions: [ReportedTransition] = []

    /// Reads a message; a malformed one (not JSON, no `_type`, an encrypted one that does not
    /// open, a location that is not valid) throws with the reason, and nothing of it is used.
    package init(
        topic: String, payload: [UInt8], keys: OwnTracksKeys, now: Double = Date().timeIntervalSince1970
    ) throws(LocationPayloadError) {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count >= 3, !levels[1].isEmpty, !levels[2].isEmpty else {
            throw .malformed("the topic \(topic) is not BASE/USER/DEVICE")
        }
        let user = String(levels[1])
        let device = try LocationPayloads.checkedDevice("\(user)/\(levels[2])")
        self.device = device
        guard !payload.isEmpty else {
            (type, fixes) = ("empty", [])
            return
        }
        var body = try LocationPayloads.parse(payload)
        if body["_type"]?.stringValue == "encrypted" {
            body = try keys.decrypt(body, user: user, device: device)
        }
        guard let type = body["_type"]?.stringValue, !type.isEmpty else {
            throw .malformed("the message has no _type")
        }
        // Counted by type: a type OwnTracks does not document counts as `other`, so a client
        // cannot make up metric labels.
        self.type = LocationPayloads.ownTracksTypes.contains(type) ? type : "other"
        // Sub-topics (…/event, …/waypoints) carry other messages; a location counts only on
        // the device's own topic, as the OwnTracks Recorder reads them.
        fixes =
            type == "location" && levels.count == 3
            ? try LocationPayloads.ownTracks(body, device: device, now: now) : []
        if type == "transition", levels.count == 3 || (levels.count == 4 && levels[3] == "event") {
            transitions = try LocationPayloads.ownTracksMessages(body, device: device, now: now).transitions
        }
    }
}

/// The configured OwnTracks encryption secrets, by `user/device` or by user.
package struct OwnTracksKeys: Sendable {
    package var secrets: [String: String]

    package init(secrets: [String: String]) {
        self.secrets = secrets
    }

    /// The message inside an `encrypted` one, or why it cannot be had.
    func decrypt(_ body: JSONValue, user: String, device: String) throws(LocationPayloadError) -> JSONValue {
        guard let secret = secrets[device] ?? secrets[user] else {
            throw .malformed("an encrypted message, and no key for \(device) or \(user) in the configuration")
        }
        guard let data = body["data"]?.stringValue, let opened = OwnTracksCipher.open(data, secret: secret) else {
            throw .malformed("an encrypted message that does not open with the key of \(user) (a wrong key?)")
        }
        let inner = try LocationPayloads.parse(opened)
        guard inner["_type"]?.stringValue != "encrypted" else {
            throw .malformed("an encrypted message inside another")
        }
        return inner
    }
}
