/// The JSON of the sync endpoints, written and read by both sides.
///
///     POST /v1/sync/mutations  {"mutations":[{"entity","id","key","op","payload","version"}, ...]}
///       200 {"results":[{"key","result":"applied|duplicate|rejected","reason"?}, ...]}
///     GET /v1/sync/changes?cursor=SEQ&limit=N&entity=region,event,visit
///       200 {"changes":[{"entity","id","key","op","payload","seq","version"}],"has_more":B,"next_cursor":"SEQ"}
///
/// Payloads are embedded as they are stored (canonical JSON text), not re-encoded.
public enum SyncWire {
    public static func mutationsBody<Items: Sequence<SyncMutation>>(_ mutations: Items) -> String {
        var text = #"{"mutations":["#
        var first = true
        for mutation in mutations {
            if !first { text += "," }
            first = false
            text += fields(mutation, seq: nil)
        }
        return text + "]}"
    }

    public static func parseMutations(_ body: JSONValue) throws(SyncWireError) -> [SyncMutation] {
        guard let items = body["mutations"]?.arrayValue else {
            throw SyncWireError("the body needs a \"mutations\" array")
        }
        var mutations: [SyncMutation] = []
        mutations.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            mutations.append(try mutation(item, at: "mutations[\(index)]"))
        }
        return mutations
    }

    public static func resultsBody(_ results: [(key: String, result: SyncResult)]) -> String {
        let items = results.map { key, result -> JSONValue in
            var object: [String: JSONValue] = ["key": .string(key)]
            switch result {
            case .applied: object["result"] = .string("applied")
            case .duplicate: object["result"] = .string("duplicate")
            case .rejected(let reason):
                object["result"] = .string("rejected")
                object["reason"] = .string(reason)
            }
            return .object(object)
        }
        return JSONValue.object(["results": .array(items)]).canonicalText()
    }

    /// The results by key.
    public static func parseResults(_ body: JSONValue) throws(SyncWireError) -> [String: SyncResult] {
        guard let items = body["results"]?.arrayValue else {
            throw SyncWireError("the answer has no \"results\" array")
        }
        var results: [String: SyncResult] = [:]
        for (index, item) in items.enumerated() {
            guard let key = item["key"]?.stringValue, let result = item["result"]?.stringValue else {
                throw SyncWireError("results[\(index)] needs \"key\" and \"result\"")
            }
            switch result {
            case "applied": results[key] = .applied
            case "duplicate": results[key] = .duplicate
            case "rejected":
                results[key] = .rejected(reason: item["reason"]?.stringValue ?? "rejected without a reason")
            default: throw SyncWireError("results[\(index)]: unknown result \"\(result)\"")
            }
        }
        return results
    }

    public static func changesBody(_ changes: [SyncChange], nextCursor: Int64, hasMore: Bool) -> String {
        let items = changes.map { fields($0.mutation, seq: $0.seq) }.joined(separator: ",")
        return #"{"changes":["# + items + #"],"has_more":\#(hasMore),"next_cursor":"\#(nextCursor)"}"#
    }

    public static func parseChanges(_ body: JSONValue) throws(SyncWireError) -> (
        changes: [SyncChange], nextCursor: Int64, hasMore: Bool
    ) {
        guard let items = body["changes"]?.arrayValue, let cursorText = body["next_cursor"]?.stringValue,
            let nextCursor = Int64(cursorText), nextCursor >= 0
        else { throw SyncWireError("the answer needs \"changes\" and a numeric \"next_cursor\"") }
        var changes: [SyncChange] = []
        for (index, item) in items.enumerated() {
            let place = "changes[\(index)]"
            guard let number = item["seq"]?.numberValue else { throw SyncWireError("\(place) has no \"seq\"") }
            // A sequence number from another machine: whole, not negative, and one an Int64 holds.
            guard number >= 0, let seq = Int64(exactly: number) else {
                throw SyncWireError("\(place): \"seq\" must be a whole number from 0 to 2^63, not \(number)")
            }
            changes.append(SyncChange(seq: seq, mutation: try mutation(item, at: place)))
        }
        let hasMore: Bool
        if case .bool(let value) = body["has_more"] { hasMore = value } else { hasMore = false }
        return (changes, nextCursor, hasMore)
    }

    private static func fields(_ mutation: SyncMutation, seq: Int64?) -> String {
        var text = #"{"entity":"# + JSONValue.string(mutation.entity.name).canonicalText()
        text += #","id":"# + JSONValue.string(mutation.id).canonicalText()
        text += #","key":"# + JSONValue.string(mutation.key).canonicalText()
        text += #","op":""# + mutation.op.rawValue + #"","payload":"# + mutation.payload
        if let seq { text += #","seq":\#(seq)"# }
        return text + #","version":\#(mutation.version)}"#
    }

    private static func mutation(_ item: JSONValue, at place: String) throws(SyncWireError) -> SyncMutation {
        guard let key = item["key"]?.stringValue, !key.isEmpty else { throw SyncWireError("\(place) needs a \"key\"") }
        guard let entity = item["entity"]?.stringValue, let id = item["id"]?.stringValue, !id.isEmpty else {
            throw SyncWireError("\(place) (\(key)) needs \"entity\" and \"id\"")
        }
        guard let opText = item["op"]?.stringValue, let op = SyncOperation(rawValue: opText) else {
            throw SyncWireError("\(place) (\(key)): \"op\" must be \"upsert\" or \"delete\"")
        }
        guard let version = item["version"]?.numberValue, version >= 0, version == version.rounded(), version < 1e12
        else {
            throw SyncWireError("\(place) (\(key)): \"version\" must be a whole number")
        }
        let payload = item["payload"] ?? .object([:])
        return SyncMutation(
            key: key, entity: SyncEntity(entity), id: id, op: op, version: Int(version),
            payload: payload.canonicalText(), parsedPayload: payload)
    }
}

/// A sync body that does not have the shape of the protocol.
public struct SyncWireError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
