import FencepostCore
import FencepostFormats

/// What the service reads from requests: JSON itself, the location payloads (our batch,
/// OwnTracks, OsmAnd's parameters) and the sync mutation batch (and, on the client side, the
/// backend's answers).
enum PayloadTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget(
            "json", "JSONParser (the scanner under every JSON reader): parse, write canonically, parse again", json),
        FuzzTarget("location-batch", "POST /v1/devices/{device}/locations: the streaming batch reader", locationBatch),
        FuzzTarget("owntracks-payload", "POST /owntracks: an OwnTracks HTTP-mode body", ownTracks),
        FuzzTarget("osmand", "GET|POST /osmand: a form-encoded body as OsmAnd / Traccar Client parameters", osmAnd),
        FuzzTarget(
            "traccar-client", "POST /osmand: Traccar Client's JSON body (one location or its batch)", traccarClient),
        FuzzTarget("overland", "POST /overland: an Overland batch of GeoJSON locations", overland),
        FuzzTarget(
            "device-transitions", "POST /v1/devices/{device}/transitions: one reported transition or an array",
            deviceTransitions),
        FuzzTarget("traccar-forward", "POST /traccar: a position a Traccar server forwards as JSON", traccarForward),
        FuzzTarget(
            "sync-wire", "POST /v1/sync/mutations batches, and the results and change pages sync reads back", syncWire),
    ]

    /// A document that parses must parse again, to the same value, from its canonical text.
    static func json(_ bytes: [UInt8]) -> FuzzOutcome {
        guard let value = try? JSONParser.parse(bytes) else { return .refused }
        let text = value.canonicalText()
        guard let again = try? JSONParser.parse(Array(text.utf8)) else {
            violated("canonical JSON does not parse: \(text)")
        }
        if again != value { violated("canonical JSON parses to another value: \(text)") }
        return .accepted(1)
    }

    static func locationBatch(_ bytes: [UInt8]) -> FuzzOutcome {
        guard let fixes = try? LocationPayloads.batch(bytes, device: "fuzz") else { return .refused }
        checkFixes(fixes)
        return .accepted(fixes.count)
    }

    static func ownTracks(_ bytes: [UInt8]) -> FuzzOutcome {
        do {
            let body = try LocationPayloads.parse(bytes)
            let device = try LocationPayloads.ownTracksDevice(user: "user", device: body["tid"]?.stringValue)
            if DeviceID.problem(device) != nil { violated("an unacceptable device id passed: \(device)") }
            let fixes = try LocationPayloads.ownTracks(body, device: device)
            checkFixes(fixes)
            return .accepted(fixes.count)
        } catch {
            return .refused
        }
    }

    /// Every transition read is an enter or an exit at a finite time, its accuracy 0 or more.
    static func deviceTransitions(_ bytes: [UInt8]) -> FuzzOutcome {
        guard let body = try? LocationPayloads.parse(bytes), let reported = try? TransitionPayloads.plain(body) else {
            return .refused
        }
        for report in reported {
            if report.kind != .enter && report.kind != .exit { violated("a transition of kind \(report.kind)") }
            if !report.time.isFinite { violated("a transition at time \(report.time)") }
            if let accuracy = report.accuracy, !(accuracy >= 0) { violated("an accuracy of \(accuracy)") }
            if case .id(let region) = report.region, region.isEmpty { violated("a transition with no region") }
        }
        return .accepted(reported.count)
    }

    static func osmAnd(_ bytes: [UInt8]) -> FuzzOutcome {
        let form = LocationPayloads.formParameters(bytes)
        guard let fix = try? LocationPayloads.osmAnd({ form[$0] }) else { return .refused }
        if DeviceID.problem(fix.device) != nil { violated("an unacceptable device id passed: \(fix.device)") }
        checkFixes([fix])
        return .accepted(1)
    }

    static func traccarClient(_ bytes: [UInt8]) -> FuzzOutcome {
        protocolMessages { try LocationPayloads.traccarClient(LocationPayloads.parse(bytes)) }
    }

    static func overland(_ bytes: [UInt8]) -> FuzzOutcome {
        protocolMessages { try LocationPayloads.overland(LocationPayloads.parse(bytes), fallbackDevice: "fuzz") }
    }

    static func traccarForward(_ bytes: [UInt8]) -> FuzzOutcome {
        protocolMessages { try LocationPayloads.traccarForward(LocationPayloads.parse(bytes)) }
    }

    /// Messages a protocol reader accepted: fixes in range with acceptable devices, and as many
    /// `location` messages counted as fixes.
    private static func protocolMessages(_ read: () throws -> ProtocolMessages) -> FuzzOutcome {
        guard let messages = try? read() else { return .refused }
        checkFixes(messages.fixes)
        for fix in messages.fixes where DeviceID.problem(fix.device) != nil {
            violated("an unacceptable device id passed: \(fix.device)")
        }
        if messages.types["location", default: 0] != messages.fixes.count {
            violated("\(messages.fixes.count) fixes but \(messages.types["location", default: 0]) location messages")
        }
        return .accepted(messages.fixes.count)
    }

    /// A batch that parses must come out of ``SyncWire/mutationsBody(_:)`` the same.
    static func syncWire(_ bytes: [UInt8]) -> FuzzOutcome {
        guard let body = try? JSONParser.parse(bytes) else { return .refused }
        var count = 0
        if let mutations = try? SyncWire.parseMutations(body) {
            let text = SyncWire.mutationsBody(mutations)
            guard let again = try? SyncWire.parseMutations(JSONParser.parse(Array(text.utf8))) else {
                violated("a written mutation batch does not parse: \(text)")
            }
            if again.map(\.withoutParsedPayload) != mutations.map(\.withoutParsedPayload) {
                violated("a written mutation batch parses to other mutations: \(text)")
            }
            count += mutations.count
        }
        if let results = try? SyncWire.parseResults(body) { count += results.count }
        if let page = try? SyncWire.parseChanges(body) { count += page.changes.count }
        return count > 0 ? .accepted(count) : .refused
    }

    /// What every accepted fix must be: finite, in range, with its time.
    static func checkFixes(_ fixes: [Fix]) {
        for fix in fixes {
            guard fix.time.isFinite, fix.lat.isFinite, fix.lon.isFinite, abs(fix.lat) <= 90, abs(fix.lon) <= 180 else {
                violated("an out-of-range fix was accepted: \(fix)")
            }
        }
    }
}

extension SyncMutation {
    /// The mutation as sent: the parsed payload is a cache of the payload text.
    var withoutParsedPayload: SyncMutation {
        var copy = self
        copy.parsedPayload = nil
        return copy
    }
}
