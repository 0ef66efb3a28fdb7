import FencepostCore
package import FencepostIngest
import FencepostMQTT
package import FencepostStore
import FencepostSync
package import Hummingbird
package import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// What `fencepost serve` needs to build the application.
package struct ServiceSettings: Sendable {
    package var host: String
    package var port: Int
    package var configuration: ServiceConfiguration
    package var ingest: IngestOptions
    /// How often live streams and webhook delivery look for other processes' writes.
    package var pollInterval: Duration
    /// Called with the bound port once the server listens (`--port 0` picks a free one).
    package var onListening: @Sendable (Int) -> Void
    /// Called with every route, as `METHOD /path/{parameter}`, once the router is assembled:
    /// what the OpenAPI document must describe.
    package var onRoutes: @Sendable ([String]) -> Void = { _ in }

    package init(
        host: String = "127.0.0.1", port: Int = 8080, configuration: ServiceConfiguration = ServiceConfiguration(),
        ingest: IngestOptions = IngestOptions(), pollInterval: Duration = .seconds(1),
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.host = host
        self.port = port
        self.configuration = configuration
        self.ingest = ingest
        self.pollInterval = pollInterval
        self.onListening = onListening
    }
}

/// Assembles the HTTP service: the router with its controllers, the live ingest writer and the
/// background jobs the configuration switches on, all in one service group that shuts down
/// gracefully (SIGTERM/SIGINT with ``runService(store:settings:logger:)``): the server stops taking requests and
/// finishes those in flight, then the writer commits what is queued, then the jobs stop.
///
/// Start-up reads only the regions (to build the monitor): no scan of events or the outbox.
package func buildApplication(store: Store, settings: ServiceSettings, logger: Logger) async throws
    -> some ApplicationProtocol
{
    let metrics = ServiceMetrics()
    let signal = ChangeSignal()
    let auth = Authenticator(store: store)
    let configuration = settings.configuration
    // Answers wait until their writes are on disk, unless the configuration trades that for
    // speed; the store's housekeeping runs beside the writer.
    let durability = try store.durability(syncsCommits: configuration.durableCommits)
    var ingestOptions = settings.ingest
    ingestOptions.transitionWindow = configuration.transitionWindowSeconds
    ingestOptions.replayedAfter =
        configuration.replayedAfterSeconds > 0 ? configuration.replayedAfterSeconds : .infinity
    let ingestor = try await LiveIngestor(
        store: store, options: ingestOptions, durability: durability,
        reporting: LiveIngestReport(metrics: metrics, signal: signal))

    let router = Router(context: FencepostRequestContext.self)
    router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
    router.add(middleware: JSONErrorMiddleware())
    OperationsController(
        auth: auth, store: store, metrics: metrics, metricsRequireToken: configuration.metricsRequireToken
    )
    .addRoutes(to: router)
    let planning = PlanningRegions(store: store)
    let ownTracksWaypoints = configuration.ownTracksWaypoints ? OwnTracksWaypoints() : nil
    let transitions = TransitionRecorder(
        store: store, planning: planning, durability: durability, signal: signal,
        window: configuration.transitionWindowSeconds)
    LocationsController(
        auth: auth, store: store, ingestor: ingestor, metrics: metrics,
        planning: planning, ownTracksWaypoints: ownTracksWaypoints, transitions: transitions,
        maxBodyBytes: configuration.maxBodyBytes, ownTracksKeys: OwnTracksKeys(secrets: configuration.mqtt?.keys ?? [:])
    )
    .addRoutes(to: router)
    RegionsController(auth: auth, store: store, durability: durability, maxBodyBytes: configuration.maxBodyBytes)
        .addRoutes(to: router)
    GroupRegionsController(
        auth: auth, store: store, durability: durability, maxBodyBytes: configuration.maxBodyBytes
    )
    .addRoutes(to: router)
    EventsController(auth: auth, store: store, signal: signal, pollInterval: settings.pollInterval).addRoutes(
        to: router)
    WebhooksController(auth: auth, store: store).addRoutes(to: router)
    SinksController(auth: auth, store: store, board: metrics.sinks).addRoutes(to: router)
    DevicesController(auth: auth, store: store, durability: durability, maxBodyBytes: configuration.maxBodyBytes)
        .addRoutes(to: router)
    MonitoredSetController(auth: auth, store: store, planning: planning, maxBodyBytes: configuration.maxBodyBytes)
        .addRoutes(to: router)
    TrackController(auth: auth, store: store).addRoutes(to: router)
    MovementController(auth: auth, store: store).addRoutes(to: router)
    TransitionsController(
        auth: auth, store: store, transitions: transitions, metrics: metrics, maxBodyBytes: configuration.maxBodyBytes
    )
    .addRoutes(to: router)
    LiveController(auth: auth, store: store, mapTiles: configuration.mapTiles).addRoutes(to: router)
    SyncController(
        auth: auth, store: store, signal: signal, durability: durability, maxBodyBytes: configuration.maxBodyBytes
    )
    .addRoutes(to: router)

    settings.onRoutes(
        router.routes.map { route in
            let path = route.path.description.split(separator: "/", omittingEmptySubsequences: false).map {
                $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0)
            }
            return "\(route.method) \(path.joined(separator: "/"))"
        })
    router.answerOtherMethodsNotAllowed()

    let jobs = BackgroundJobs()
    jobs.register(ChangeListener(store: store, signal: signal, logger: logger))
    let sinks = try configuration.outboxSinks(store: store, logger: logger)
    if !sinks.isEmpty {
        // A sink seen for the first time starts at the newest event: its cursor is made now,
        // before the server takes a request, so no event answered from here on can fall before
        // it (made by the job, it missed what was posted before the job first ran).
        for sink in sinks {
            _ = try await store.webhookCursor(sink.cursorKey)
            metrics.sinks.register(sink)
        }
        jobs.register(
            SinkDeliveryJob(
                store: store, sinks: sinks, board: metrics.sinks, signal: signal, pollInterval: settings.pollInterval,
                logger: logger))
    }
    if configuration.syncEnabled, let sync = configuration.sync {
        jobs.register(
            SyncPushJob(
                store: store,
                endpoint: try SyncEndpoint(baseURL: sync.to, token: sync.token, timeout: .seconds(sync.timeoutSeconds)),
                // Retries capped at 30 s (5 s while the backend is unreachable): after an outage the
                // queue starts draining within seconds.
                settings: PushSettings(
                    batchSize: sync.batchSize, maxAttempts: sync.maxAttempts, retries: RetrySchedule(cap: 30),
                    giveUpAfter: nil),
                signal: signal,
                pollInterval: settings.pollInterval, logger: logger))
    }
    if let watch = configuration.watch {
        jobs.register(
            try await WatchJob(
                store: store, folders: Watcher.Folders(inbox: watch.inbox, regions: watch.regions),
                options: FileImport.Options(ingest: ingestOptions), metrics: metrics, logger: logger))
    }
    if let mqtt = configuration.mqtt {
        jobs.register(
            MQTTIngestJob(
                client: MQTTClient(configuration: try mqtt.clientConfiguration(), logger: logger),
                ingestor: ingestor, keys: OwnTracksKeys(secrets: mqtt.keys), metrics: metrics,
                transitions: transitions, waypoints: ownTracksWaypoints,
                planning: planning, logger: logger))
    }
    if configuration.jobs.historyPrune {
        jobs.register(HistoryPruneJob(store: store, interval: .seconds(3_600), logger: logger))
    }
    if configuration.jobs.outboxCleanup {
        jobs.register(
            OutboxCleanupJob(
                store: store, retention: .seconds(configuration.jobs.outboxRetentionDays * 86_400),
                interval: .seconds(3_600), logger: logger))
    }

    let maintenance = StoreMaintenance(durability: durability, interval: .milliseconds(200), logger: logger)
    let onListening = settings.onListening
    return Application(
        router: router,
        // Headers are bounded by the HTTP parser (80 KiB, 1,000 fields); idle connections close.
        server: .http1(configuration: .init(idleTimeout: .nanoseconds(Int64(configuration.idleTimeoutSeconds * 1e9)))),
        configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "fencepost"),
        // The writer comes first: the group stops services in reverse order, so the server
        // drains its requests while the writer still commits them.
        services: [ingestor, maintenance] + jobs.seal(),
        onServerRunning: { channel in
            if let port = channel.localAddress?.port { onListening(port) }
        },
        logger: logger)
}

/// `fencepost watch`: the watch job alone, until SIGTERM or SIGINT (the file being imported is
/// finished first), in one service group with the store's connection pool (PostgreSQL), as
/// `serve` runs them (``runService(store:settings:logger:)``).
package func runWatcher(store: Store, folders: Watcher.Folders, options: FileImport.Options, logger: Logger)
    async throws
{
    var services: [any Service] = []
    if let pool = store.poolService { services.append(pool) }
    services.append(WatcherService(store: store, folders: folders, options: options, logger: logger))
    let group = ServiceGroup(
        configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
}

/// The watch job, made when the group starts it (making it reads the store).
private struct WatcherService: Service {
    let store: Store
    let folders: Watcher.Folders
    let options: FileImport.Options
    let logger: Logger

    func run() async throws {
        try await WatchJob(store: store, folders: folders, options: options, metrics: nil, logger: logger).run()
    }
}
