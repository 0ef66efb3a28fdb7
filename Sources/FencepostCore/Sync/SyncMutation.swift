/// One change to one entity as sync carries it: an outbox row on the client, a line of a
/// `POST /v1/sync/mutations` batch, an entry of `GET /v1/sync/changes`.
public struct SyncMutation: Sendable, Hashable {
    /// Applied at most once per key on the server: `entity:id:vN` for events and visits
    /// (the same on every machine), one key per edit for regions.
    public var key: String
    public var entity: SyncEntity
    public var id: String
    public var op: SyncOperation
    public var version: Int
    /// The entity as canonical JSON text (a region's GeoJSON Feature); `{}` for deletes.
    public var payload: String
    /// The payload as parsed from a request, so the server does not parse it twice.
    public var parsedPayload: JSONValue?

    public init(
        key: String, entity: SyncEntity, id: String, op: SyncOperation, version: Int, payload: String,
        parsedPayload: JSONValue? = nil
    ) {
        self.key = key
        self.entity = entity
        self.id = id
        self.op = op
        self.version = version
        self.payload = payload
        self.parsedPayload = parsedPayload
    }
}

public enum SyncOperation: String, Sendable, Hashable {
    case upsert, delete
}

/// What the server did with one mutation.
public enum SyncResult: Sendable, Hashable {
    /// Applied now (a version older than the one held is applied as a no-op).
    case applied
    /// Applied before under the same key; nothing changed now.
    case duplicate
    /// Not applied, and not remembered: fixing the cause and sending it again applies it.
    case rejected(reason: String)
}

/// A mutation in the server's change feed, with its position.
public struct SyncChange: Sendable, Hashable {
    public var seq: Int64
    public var mutation: SyncMutation

    public init(seq: Int64, mutation: SyncMutation) {
        self.seq = seq
        self.mutation = mutation
    }
}

/// What a mutation changes. Its ``name`` is what the wire and the outbox's `entity` column hold.
public enum SyncEntity: Sendable, Hashable, CustomStringConvertible {
    case event, visit, region
    /// A name this version does not know, kept as it came: the server rejects that one mutation
    /// (saying which entity) and still applies the others of its batch.
    case unknown(String)

    /// The entities this version knows.
    public static let known: [SyncEntity] = [.event, .visit, .region]

    public init(_ name: String) {
        switch name {
        case "event": self = .event
        case "visit": self = .visit
        case "region": self = .region
        default: self = .unknown(name)
        }
    }

    /// `event`, `visit`, `region`, or the unknown name as it came.
    public var name: String {
        switch self {
        case .event: "event"
        case .visit: "visit"
        case .region: "region"
        case .unknown(let name): name
        }
    }

    public var description: String { name }
}
