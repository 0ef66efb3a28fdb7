import ArgumentParser
import FencepostService
import FencepostStore
import Foundation
import Hummingbird
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the HTTP service: live location ingest, regions, events, streams, webhooks.",
        discussion: """
            Every request needs a bearer token (fencepost tokens create), except /healthz, \
            the live page at / (it asks for a token and sends it in headers) and, unless the \
            config says otherwise, /metrics.

            Endpoints (the README has the details):
              POST /v1/devices/{device}/locations  {"fixes":[{"time","lat","lon",...}]}
              POST /owntracks              OwnTracks HTTP mode (token as password)
              GET|POST /osmand?id=&lat=&lon=&timestamp=   Traccar Client, OsmAnd
              GET /v1/regions[/{id}]   PUT|DELETE /v1/regions/{id}
              POST /v1/regions/plan   POST /v1/regions/apply
              GET /v1/events?since&until&device&region&kind&cursor&limit&format
                  (format json, csv, jsonl, geojson or ics)
              GET /v1/visits?open=true
              GET /v1/events/stream        Server-Sent Events, Last-Event-ID
              GET /v1/webhooks/dead-letters   GET /healthz   GET /metrics
              GET /   the live page: regions, devices, events, open visits
              POST /v1/sync/mutations   GET /v1/sync/changes   (fencepost sync)

            --config FILE is JSON, every field optional:
              {"webhooks": [{"name": "ops", "url": "https://…", "secret": "…"}],
               "sync": {"to": "http://central:8080", "token": "fp_…",
                        "batch_size": 500, "max_attempts": 10},
               "jobs": {"webhooks": true, "sync": true, "outbox_cleanup": true,
                        "outbox_retention_days": 7, "history_prune": true},
               "metrics_require_token": false, "max_body_bytes": 16777216,
               "webhook_max_attempts": 8, "durable_commits": true,
               "map_tiles": "https://…/{z}/{x}/{y}.png", "map_tiles_attribution": "…",
               "watch": {"inbox": "DIR", "regions": "DIR"}}
            "watch" runs `fencepost watch` as a job: files dropped into the inbox are each \
            imported once, the regions folder is applied whenever it changes (see watch --help).

            SIGTERM or SIGINT stops taking requests, finishes those in flight and \
            commits them. An address that cannot be listened on (in use, not this \
            machine's) ends the command at once with exit code 3. Logs go to stderr; LOG_LEVEL=debug|info|warning sets their level.
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on; 0 picks a free one (printed as \"listening on http://HOST:PORT\").")
    var port = 8080

    @Option(help: "Service configuration (JSON): webhooks, background jobs, limits.")
    var config: String?

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0…65535.") }
    }

    func run() async throws {
        let configuration: ServiceConfiguration = try CommandFailure.reporting { try loadConfiguration() }
        let store = try await self.store.open(poolAsService: true)
        var logger = Logger(label: "fencepost")
        logger.logLevel =
            ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        let host = self.host
        let settings = ServiceSettings(host: host, port: port, configuration: configuration) { port in
            Console.error(["listening on http://\(host):\(port)"])
        }
        try await CommandFailure.reporting {
            do {
                try await runService(store: store, settings: settings, logger: logger)
            } catch let error as ListenError {
                throw CommandFailure.io("error: \(error)")
            }
        }
    }

    private func loadConfiguration() throws -> ServiceConfiguration {
        guard let config else { return ServiceConfiguration() }
        do {
            return try ServiceConfiguration.load(path: config)
        } catch {
            throw CommandFailure.invalidInput(["error: \(error)"])
        }
    }
}
