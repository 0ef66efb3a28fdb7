extension RegionPlan {
    /// The plan for scripts and the HTTP API: each change with its action, and the counts.
    public var json: JSONValue {
        // Every field is a string, a number or a bool: encoding cannot fail.
        (try? JSONValueEncoder.encode(PlanJSON(self))) ?? .null
    }

    private struct PlanJSON: Encodable {
        struct Change: Encodable {
            var id: String
            var action: String
            /// Updates only.
            var geometryChanged: Bool?
            /// Updates only, when known: what changed.
            var fields: [String]?

            enum CodingKeys: String, CodingKey {
                case id, action, fields
                case geometryChanged = "geometry_changed"
            }
        }

        var changes: [Change]
        var add: Int
        var update: Int
        var remove: Int
        var unchanged: Int

        init(_ plan: RegionPlan) {
            changes = plan.changes.map { change in
                switch change {
                case .add: Change(id: change.regionID, action: "add")
                case .update(_, let geometryChanged, _):
                    Change(
                        id: change.regionID, action: "update", geometryChanged: geometryChanged,
                        fields: plan.changedFields[change.regionID])
                case .remove: Change(id: change.regionID, action: "remove")
                }
            }
            add = plan.addCount
            update = plan.updateCount
            remove = plan.removeCount
            unchanged = plan.unchanged.count
        }
    }
}

extension RegionConfigIssue {
    /// The issue for scripts and the HTTP API; a feature's index and id are null when the
    /// issue is the file's.
    public var json: JSONValue {
        .object([
            "file": .string(file),
            "feature": featureIndex.map { .number(Double($0)) } ?? .null,
            "id": featureID.map(JSONValue.string) ?? .null,
            "code": .string(problem.code),
            "message": .string(description),
        ])
    }
}
