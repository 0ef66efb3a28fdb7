package import FencepostCore
package import FencepostGeometry

/// Everything a map shows, gathered by the caller (the CLI from region files, traces and the
/// store; the service from the store) and drawn by ``MapRenderer``. Plain values: rendering
/// reads no file and no database.
package struct MapScene: Sendable {
    /// The regions to draw, each as its own shape.
    package var regions: [Region]
    /// A region config that was refused: its features drawn marked, its problems listed.
    package var refused: RefusedConfig?
    /// Each device's track, in the order they are listed.
    package var tracks: [DeviceTrack]
    /// Geofence events, each drawn as a marker where its boundary was crossed.
    package var events: [MapEvent]
    /// Visits without an exit: their regions are highlighted.
    package var openVisits: [MapVisit]
    /// A line under the map saying what it shows (sources, window); nil for none.
    package var caption: String?

    package init(
        regions: [Region] = [], refused: RefusedConfig? = nil, tracks: [DeviceTrack] = [], events: [MapEvent] = [],
        openVisits: [MapVisit] = [], caption: String? = nil
    ) {
        self.regions = regions
        self.refused = refused
        self.tracks = tracks
        self.events = events
        self.openVisits = openVisits
        self.caption = caption
    }

    /// The lon/lat box of everything drawn.
    var bounds: Envelope? {
        var box: Envelope?
        func add(_ envelope: Envelope) { box = box.map { $0.union(envelope) } ?? envelope }
        // A refused config's map is about its problems: it fits the refused features (a valid
        // feature far away, such as a swapped point in the ocean, would shrink them to a dot).
        if let refused, refused.features.contains(where: { !$0.drawable.isEmpty }) {
            for feature in refused.features where !feature.drawable.isEmpty {
                add(Envelope(covering: feature.drawable))
            }
            return box
        }
        for region in regions { add(region.shape.bounds) }
        for feature in refused?.features ?? [] {
            let positions = feature.drawable
            if !positions.isEmpty { add(Envelope(covering: positions)) }
        }
        for track in tracks {
            if let bounds = track.bounds { add(bounds) }
        }
        for event in events {
            if let position = event.position { add(Envelope(covering: [position])) }
        }
        return box
    }
}

/// A geofence event as a map draws it.
package struct MapEvent: Sendable, Hashable {
    package var id: String
    /// `enter`, `exit` or `dwell`.
    package var kind: String
    package var device: String
    package var regionID: String
    package var visitID: String?
    /// Seconds since the epoch.
    package var time: Double
    /// `gap`, `pass`.
    package var flags: [String]
    /// Where the boundary was crossed; nil for a dwell (drawn on the track, or at its enter).
    package var position: Position?

    package init(
        id: String, kind: String, device: String, regionID: String, visitID: String?, time: Double, flags: [String],
        position: Position?
    ) {
        self.id = id
        self.kind = kind
        self.device = device
        self.regionID = regionID
        self.visitID = visitID
        self.time = time
        self.flags = flags
        self.position = position
    }

    package init(_ event: GeofenceEvent) {
        self.init(
            id: event.id, kind: event.kind.rawValue, device: event.device, regionID: event.regionID,
            visitID: event.visitID,
            time: event.time, flags: event.flags.names, position: event.position)
    }
}

/// A visit as maps and timelines draw it.
package struct MapVisit: Sendable, Hashable {
    package var id: String
    package var device: String
    package var regionID: String
    /// Seconds since the epoch.
    package var enteredAt: Double
    /// Nil while the visit is open.
    package var exitedAt: Double?
    /// `exit`, `region_removed`, `region_changed`.
    package var exitReason: String?
    /// Flags of its enter and exit events (`gap`, `pass`), when known.
    package var flags: Set<String>

    package init(
        id: String, device: String, regionID: String, enteredAt: Double, exitedAt: Double? = nil,
        exitReason: String? = nil,
        flags: Set<String> = []
    ) {
        self.id = id
        self.device = device
        self.regionID = regionID
        self.enteredAt = enteredAt
        self.exitedAt = exitedAt
        self.exitReason = exitReason
        self.flags = flags
    }

    package var isOpen: Bool { exitedAt == nil }

    /// The visits a time-ordered list of events describes: each enter opens one, its exit
    /// closes it (the visit tracker's rule), and the flags of both are kept.
    package static func visits(from events: [MapEvent]) -> [MapVisit] {
        var visits: [MapVisit] = []
        var index: [String: Int] = [:]
        for event in events {
            guard let visitID = event.visitID else { continue }
            switch event.kind {
            case "enter":
                index[visitID] = visits.count
                visits.append(
                    MapVisit(
                        id: visitID, device: event.device, regionID: event.regionID, enteredAt: event.time,
                        flags: Set(event.flags)))
            case "exit":
                guard let at = index[visitID] else { continue }
                visits[at].exitedAt = event.time
                visits[at].exitReason = "exit"
                visits[at].flags.formUnion(event.flags)
            default:
                continue
            }
        }
        return visits
    }
}
