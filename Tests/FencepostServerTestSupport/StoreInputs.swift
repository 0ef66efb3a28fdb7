package import FencepostCore
package import FencepostGeometry
package import FencepostIngest
package import FencepostStore

/// Metres east of an origin, for straight test walks through circles on the same line.
package struct WalkGrid: Sendable {
    package let projection: LocalProjection

    package init(origin: Position) {
        projection = LocalProjection(origin: origin)
    }

    /// A fix `x` metres east of the origin, `t` seconds after 2023-11-14T22:13:20Z.
    package func fix(_ x: Double, t: Double, device: String = "bus") -> Fix {
        let p = projection.unproject(x: x, y: 0)
        return Fix(device: device, time: 1_700_000_000 + t, lat: p.lat, lon: p.lon, accuracy: 5)
    }

    /// A circle centred `x` metres east of the origin.
    package func circle(_ id: String, x: Double, radius: Double) -> Region {
        Region(id: id, shape: .circle(center: projection.unproject(x: x, y: 0), radius: radius))
    }

    /// Along x from -300 to 300 m at 2 m/s, one fix a second.
    package func walk(device: String = "bus") -> [Fix] {
        (0...300).map { fix(-300 + 2 * Double($0), t: Double($0), device: device) }
    }
}

/// A store's contents made the way the product makes them: by ingesting.
package enum StoreInputs {
    /// Ingests each input (a file's fixes) in its own transaction, as `fencepost ingest` does.
    package static func ingest(_ store: Store, _ inputs: [[Fix]], options: IngestOptions = IngestOptions())
        async throws -> IngestSummary
    {
        let session = try await IngestSession(store: store, options: options)
        for input in inputs {
            try await session.ingest(input)
        }
        return session.summary
    }
}
