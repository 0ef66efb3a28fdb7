extension RegionPlan {
    /// The plan for scripts and the HTTP API: each change with its action, and the counts.
    public var json: JSONValue {
        let changes: [JSONValue] = changes.map { change in
            var entry: [String: JSONValue] = ["id": .string(change.regionID)]
            switch change {
            case .add: entry["action"] = .string("add")
            case .update(_, let geometryChanged, _):
                entry["action"] = .string("update")
                entry["geometry_changed"] = .bool(geometryChanged)
            case .remove: entry["action"] = .string("remove")
            }
            return .object(entry)
        }
        return .object([
            "changes": .array(changes),
            "add": .number(Double(addCount)),
            "update": .number(Double(updateCount)),
            "remove": .number(Double(removeCount)),
            "unchanged": .number(Double(unchanged.count)),
        ])
    }
}

extension RegionConfigIssue {
    /// The issue for scripts and the HTTP API.
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
