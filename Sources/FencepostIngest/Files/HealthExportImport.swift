import FencepostCore
package import FencepostFormats
package import FencepostHealth
package import FencepostStore

/// An Apple Health export imported into the store: read as a stream and planned, its workout
/// routes ingested like any trace, then its events committed with the kinds' anchors.
package enum HealthExportImport {
    /// What one import did.
    package struct Outcome: Sendable {
        package var read: HealthReadSummary
        package var committed: HealthCommitSummary
        /// The routes' ingest, when the export had routes.
        package var routes: IngestSummary?
    }

    /// Imports the export at `path`. With `file`, records it as imported in the transaction of
    /// its events; nil when the store already records that content (its routes may have been
    /// fed again, which changes nothing: their fixes are already seen). A malformed export
    /// throws ``TraceReadError`` with nothing of its events written. `progress` hears how far
    /// the reading got, now and then.
    package static func run(
        path: String, store: Store, options: HealthImportOptions, recording file: ImportedFile? = nil,
        progress: (_ document: String, _ items: Int, _ source: ByteSource) -> Void = { _, _, _ in }
    ) async throws -> Outcome? {
        let export = try HealthExportFile(path: path)
        let source = try export.document()
        var reader = HealthExportReader(source: source)
        let importer = HealthImporter(options: options, anchors: try await store.healthAnchors(owner: options.owner))
        let plan = try importer.plan(reading: &reader) { items in progress(export.documentName, items, source) }
        // Routes first: their ingest is idempotent, so a crash before the commit below leaves
        // the workouts new and their routes are fed again, harmlessly.
        let routes = try await ingestRoutes(plan.routes, from: export, store: store)
        guard
            let committed = try await store.commitHealth(
                owner: options.owner, events: plan.events, anchors: plan.anchors, sources: plan.sources, recording: file
            )
        else { return nil }
        return Outcome(read: plan.summary, committed: committed, routes: routes)
    }

    private static func ingestRoutes(_ routes: [WorkoutRouteInput], from export: HealthExportFile, store: Store)
        async throws -> IngestSummary?
    {
        guard !routes.isEmpty else { return nil }
        let session = try await IngestSession(store: store)
        for input in routes {
            switch input.route.points {
            case .file(let path):
                var reader = try TraceOpener.open(
                    try export.referencedFile(path), format: .gpx, device: input.route.source)
                try await session.ingest { try reader.next() }
            case .inline(let fixes):
                var fixes = fixes.makeIterator()
                try await session.ingest { fixes.next() }
            }
        }
        return session.summary
    }
}
