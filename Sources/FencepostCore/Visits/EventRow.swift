import FencepostGeometry

/// An event as stored and exported: geofence and health events alike.
public struct EventRow: Sendable, Hashable {
    public var id: String
    public var kind: String
    public var source: String
    public var device: String
    public var region: String?
    public var visitID: String?
    public var timeMs: Int64
    public var time: String
    public var flags: [String]
    public var lat: Double?
    public var lon: Double?
    /// The event's properties as JSON text (`{}` for geofence events).
    public var properties: String

    public init(
        id: String, kind: String, source: String, device: String, region: String?, visitID: String?, timeMs: Int64,
        time: String,
        flags: [String], lat: Double?, lon: Double?, properties: String
    ) {
        self.id = id
        self.kind = kind
        self.source = source
        self.device = device
        self.region = region
        self.visitID = visitID
        self.timeMs = timeMs
        self.time = time
        self.flags = flags
        self.lat = lat
        self.lon = lon
        self.properties = properties
    }

    /// An event just written by ingest, as a read would return it.
    public init(_ event: GeofenceEvent) {
        id = event.id
        kind = event.kind.rawValue
        source = "geofence"
        device = event.device
        region = event.regionID
        visitID = event.visitID
        timeMs = Timestamp.milliseconds(event.time)
        time = Timestamp.format(seconds: event.time)
        flags = event.flags.names
        lat = event.position?.lat
        lon = event.position?.lon
        properties = event.propertiesText
    }
}

extension EventRow {
    /// The fields every JSON form of an event carries: the exports and the API (``EventExport``),
    /// the sync payload (``geofencePayload``) and the GeoJSON feature's properties start from
    /// these and add what each form has of its own (the forms are contracts with their
    /// consumers, so they keep their differences: see each).
    public var jsonFields: [String: JSONValue] {
        [
            "id": .string(id), "kind": .string(kind), "time": .string(time), "device": .string(device),
            "region": region.map(JSONValue.string) ?? .null, "visit_id": visitID.map(JSONValue.string) ?? .null,
            "flags": .array(flags.map(JSONValue.string)),
        ]
    }

    /// A geofence event as sync carries it (its outbox payload): the common fields, its source,
    /// coordinates that are null for a dwell (the export and the API leave them out), and its
    /// properties when it has some (an `overspeed`'s).
    public var geofencePayload: String {
        var fields = jsonFields
        fields["source"] = .string("geofence")
        fields["lat"] = lat.map(JSONValue.number) ?? .null
        fields["lon"] = lon.map(JSONValue.number) ?? .null
        if properties != "{}", let measured = try? JSONParser.parse(Array(properties.utf8)) {
            fields["properties"] = measured
        }
        return JSONValue.object(fields).canonicalText()
    }
}
