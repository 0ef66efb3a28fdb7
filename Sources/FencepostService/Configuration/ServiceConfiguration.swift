import FencepostCore
import FencepostFormats
import FencepostIngest
import Foundation

/// `fencepost serve --config FILE`: webhooks, job switches and limits. Every field has a
/// default, so an empty object (or no file) is a valid configuration.
package struct ServiceConfiguration: Sendable, Equatable {
    /// A URL that receives every new event as JSON, signed with HMAC-SHA256 of the body
    /// under `secret` (header `X-Fencepost-Signature: sha256=<hex>`).
    package struct Webhook: Sendable, Equatable {
        /// Names the webhook's delivery cursor and dead letters; defaults to the URL.
        package var name: String?
        /// May hold `{{placeholder}}`s (``WebhookTemplate``), filled in URL-escaped.
        package var url: String
        package var secret: String
        /// The body made from the event instead of the event's JSON.
        package var template: WebhookTemplate?
        /// `POST` (the default) or `PUT`.
        package var method: String
        /// Extra request headers (`Authorization` for Matrix).
        package var headers: [String: String]

        package init(
            name: String? = nil, url: String, secret: String, template: WebhookTemplate? = nil, method: String = "POST",
            headers: [String: String] = [:]
        ) {
            self.name = name
            self.url = url
            self.secret = secret
            self.template = template
            self.method = method
            self.headers = headers
        }

        package var key: String { name ?? url }
    }

    /// The backend an edge instance forwards its outbox to (`fencepost sync push`, continuously).
    package struct Sync: Sendable, Equatable {
        /// The backend's base URL (another `fencepost serve`).
        package var to: String
        package var token: String
        package var batchSize: Int
        package var maxAttempts: Int
        package var timeoutSeconds: Double

        package init(
            to: String, token: String, batchSize: Int = 500, maxAttempts: Int = 10, timeoutSeconds: Double = 30
        ) {
            self.to = to
            self.token = token
            self.batchSize = batchSize
            self.maxAttempts = maxAttempts
            self.timeoutSeconds = timeoutSeconds
        }
    }

    /// Background jobs, registered at start-up when switched on.
    package struct Jobs: Sendable, Equatable {
        /// Deliver events to the webhooks (on when any webhook is configured).
        package var webhooks: Bool?
        /// Push the outbox to `sync.to` (on when a sync target is configured).
        package var sync: Bool?
        /// Delete outbox rows delivered more than `outboxRetentionDays` ago.
        package var outboxCleanup: Bool
        package var outboxRetentionDays: Double
        /// Delete the stored fixes older than the store's `history_days` (``Store/pruneHistory(now:)``).
        package var historyPrune = true

        package init(
            webhooks: Bool? = nil, sync: Bool? = nil, outboxCleanup: Bool = true, outboxRetentionDays: Double = 7
        ) {
            self.webhooks = webhooks
            self.sync = sync
            self.outboxCleanup = outboxCleanup
            self.outboxRetentionDays = outboxRetentionDays
        }
    }

    /// A basemap for the live page: a tile URL template (`https://…/{z}/{x}/{y}.png`) and the
    /// attribution its provider asks for. Without it the page draws the regions on plain paper.
    package struct MapTiles: Sendable, Equatable {
        package var url: String
        package var attribution: String?

        package init(url: String, attribution: String? = nil) {
            self.url = url
            self.attribution = attribution
        }
    }

    /// `"watch": {"inbox": "DIR", "regions": "DIR"}`: files dropped into the inbox are each
    /// imported once; the regions folder is applied whenever it changes (``Watcher``).
    package struct Watch: Sendable, Equatable {
        package var inbox: String?
        package var regions: String?

        package init(inbox: String? = nil, regions: String? = nil) {
            self.inbox = inbox
            self.regions = regions
        }
    }

    package var webhooks: [Webhook]
    /// Brokers fed from the outbox (Redis Streams, ...).
    package var sinks: [Sink] = []
    package var sync: Sync?
    /// The watched inbox and regions folder, when set.
    package var watch: Watch?
    package var jobs: Jobs
    /// OwnTracks over MQTT, when set.
    package var mqtt: MQTT?
    /// `/metrics` asks for a token (any scope) when true.
    package var metricsRequireToken: Bool
    /// Request bodies past this many bytes are refused with 413.
    package var maxBodyBytes: Int
    /// Webhook attempts before an event goes to the dead-letter list.
    package var webhookMaxAttempts: Int
    /// A request is answered only once its writes are on disk (each commit waits for
    /// `fdatasync`), so a power cut loses nothing that was acknowledged. When false, an
    /// answered request survives the service crashing, not the machine, and commits are faster.
    package var durableCommits: Bool
    /// `"map_tiles"` and `"map_tiles_attribution"`.
    package var mapTiles: MapTiles?
    /// Seconds one webhook delivery may take before it counts as failed (and is retried).
    package var webhookTimeoutSeconds: Double
    /// Seconds a connection may stay open with no request under way before the service closes
    /// it: idle keep-alive connections, and clients that connect and send nothing (or stall
    /// in the middle of a request) do not hold a socket for ever.
    package var idleTimeoutSeconds: Double
    /// OwnTracks posts are answered with `setWaypoints` (the device's monitored set) when the
    /// set has changed since it was last sent.
    package var ownTracksWaypoints = true
    /// `"transition_window_seconds"`: a device's reported enter and the server's within this
    /// many seconds are one enter (``StayMerge/window``; 300 by default, iOS's reporting delay).
    package var transitionWindowSeconds = StayMerge.defaultWindow
    /// `"replayed_after_seconds"`: events of a fix posted more than this many seconds after it
    /// was taken are flagged `replayed` (``IngestOptions/replayedAfter``); 0 flags none.
    package var replayedAfterSeconds = LiveIngestor.replayedAfter

    package init(
        webhooks: [Webhook] = [], sync: Sync? = nil, jobs: Jobs = Jobs(), metricsRequireToken: Bool = false,
        maxBodyBytes: Int = 16 << 20,
        webhookMaxAttempts: Int = 8, durableCommits: Bool = true, mapTiles: MapTiles? = nil, watch: Watch? = nil,
        webhookTimeoutSeconds: Double = 10, idleTimeoutSeconds: Double = 60
    ) {
        self.watch = watch
        self.mapTiles = mapTiles
        self.webhookTimeoutSeconds = webhookTimeoutSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.webhooks = webhooks
        self.sync = sync
        self.jobs = jobs
        self.metricsRequireToken = metricsRequireToken
        self.maxBodyBytes = maxBodyBytes
        self.webhookMaxAttempts = webhookMaxAttempts
        self.durableCommits = durableCommits
    }

    /// Reads a configuration file; an error names the file, the line and column, the key and
    /// what is wrong. Unknown keys are refused (with the nearest known one).
    package static func load(path: String) throws(ConfigurationError) -> ServiceConfiguration {
        let bytes: [UInt8]
        do {
            bytes = try InputFile.read(path)
        } catch {
            throw ConfigurationError(path: path, reason: error.reason)
        }
        let document: LocatedJSON
        do {
            document = try LocatedJSON.parse(bytes)
        } catch {
            throw ConfigurationError(
                path: path, line: error.line, column: error.column, reason: "not valid JSON: \(error.reason)")
        }
        return try ServiceConfiguration(reading: try ConfigObject(document: document, file: path))
    }

    var webhooksEnabled: Bool { !webhooks.isEmpty && (jobs.webhooks ?? true) }
    var syncEnabled: Bool { sync != nil && (jobs.sync ?? true) }
}
