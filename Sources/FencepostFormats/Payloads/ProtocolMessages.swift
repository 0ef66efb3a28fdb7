package import FencepostCore

/// What one request of a phone app or an upstream server carried: the fixes to ingest, and
/// every message counted by type, so `/metrics` can say what each protocol brings in.
package struct ProtocolMessages: Sendable, Equatable {
    /// The positions, in the order the request listed them.
    package var fixes: [Fix] = []
    /// Messages by type: `location` for each position, and the other types the protocol
    /// knows (`transition`, `waypoint`, `lwt`, `visit`, …), which are accepted and not stored.
    package var types: [String: Int] = [:]
    /// The transitions the phone reported (OwnTracks `transition`), their regions not yet
    /// looked up.
    package var transitions: [ReportedTransition] = []
    /// What the phone reported beside its positions (`battery`, `activity`, `motion`, `event`,
    /// `odometer`), counted per fix that carried it: the store keeps no extras of a fix.
    package var extras: [String: Int] = [:]

    package init(fixes: [Fix] = [], types: [String: Int] = [:], extras: [String: Int] = [:]) {
        self.fixes = fixes
        self.types = types
        self.extras = extras
    }

    /// Counts one message of `type`.
    mutating func count(_ type: String) {
        types[type, default: 0] += 1
    }

    /// Counts the extras `names` of one fix that are present in `object`.
    mutating func countExtras(_ names: [String], in object: JSONValue) {
        for name in names where object[name] != nil && object[name] != .null {
            extras[name, default: 0] += 1
        }
    }
}
