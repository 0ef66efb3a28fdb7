import Foundation

/// `fencepost serve --config FILE`: webhooks, job switches and limits. Every field has a
/// default, so an empty object (or no file) is a valid configuration.
package struct ServiceConfiguration: Sendable, Codable, Equatable {
    /// A URL that receives every new event as JSON, signed with HMAC-SHA256 of the body
    /// under `secret` (header `X-Fencepost-Signature: sha256=<hex>`).
    package struct Webhook: Sendable, Codable, Equatable {
        /// Names the webhook's delivery cursor and dead letters; defaults to the URL.
        package var name: String?
        package var url: String
        package var secret: String

        package init(name: String? = nil, url: String, secret: String) {
            self.name = name
            self.url = url
            self.secret = secret
        }

        package var key: String { name ?? url }
    }

    /// The backend an edge instance forwards its outbox to (`fencepost sync push`, continuously).
    package struct Sync: Sendable, Codable, Equatable {
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

        enum CodingKeys: String, CodingKey {
            case to, token
            case batchSize = "batch_size"
            case maxAttempts = "max_attempts"
            case timeoutSeconds = "timeout_seconds"
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            to = try container.decode(String.self, forKey: .to)
            token = try container.decode(String.self, forKey: .token)
            batchSize = try container.decodeIfPresent(Int.self, forKey: .batchSize) ?? 500
            maxAttempts = try container.decodeIfPresent(Int.self, forKey: .maxAttempts) ?? 10
            timeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .timeoutSeconds) ?? 30
        }
    }

    /// Background jobs, registered at start-up when switched on.
    package struct Jobs: Sendable, Codable, Equatable {
        /// Deliver events to the webhooks (on when any webhook is configured).
        package var webhooks: Bool?
        /// Push the outbox to `sync.to` (on when a sync target is configured).
        package var sync: Bool?
        /// Delete outbox rows delivered more than `outboxRetentionDays` ago.
        package var outboxCleanup: Bool
        package var outboxRetentionDays: Double

        package init(
            webhooks: Bool? = nil, sync: Bool? = nil, outboxCleanup: Bool = true, outboxRetentionDays: Double = 7
        ) {
            self.webhooks = webhooks
            self.sync = sync
            self.outboxCleanup = outboxCleanup
            self.outboxRetentionDays = outboxRetentionDays
        }

        enum CodingKeys: String, CodingKey {
            case webhooks, sync
            case outboxCleanup = "outbox_cleanup"
            case outboxRetentionDays = "outbox_retention_days"
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            webhooks = try container.decodeIfPresent(Bool.self, forKey: .webhooks)
            sync = try container.decodeIfPresent(Bool.self, forKey: .sync)
            outboxCleanup = try container.decodeIfPresent(Bool.self, forKey: .outboxCleanup) ?? true
            outboxRetentionDays = try container.decodeIfPresent(Double.self, forKey: .outboxRetentionDays) ?? 7
        }
    }

    /// A basemap for the live page: a tile URL template (`https://…/{z}/{x}/{y}.png`) and the
    /// attribution its provider asks for. Without it the page draws the regions on plain paper.
    package struct MapTiles: Sendable, Codable, Equatable {
        package var url: String
        package var attribution: String?

        package init(url: String, attribution: String? = nil) {
            self.url = url
            self.attribution = attribution
        }
    }

    /// `"watch": {"inbox": "DIR", "regions": "DIR"}`: files dropped into the inbox are each
    /// imported once; the regions folder is applied whenever it changes (``Watcher``).
    package struct Watch: Sendable, Codable, Equatable {
        package var inbox: String?
        package var regions: String?

        package init(inbox: String? = nil, regions: String? = nil) {
            self.inbox = inbox
            self.regions = regions
        }
    }

    package var webhooks: [Webhook]
    package var sync: Sync?
    /// The watched inbox and regions folder, when set.
    package var watch: Watch?
    package var jobs: Jobs
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

    enum CodingKeys: String, CodingKey {
        case webhooks, sync, jobs, watch
        case metricsRequireToken = "metrics_require_token"
        case maxBodyBytes = "max_body_bytes"
        case webhookMaxAttempts = "webhook_max_attempts"
        case durableCommits = "durable_commits"
        case mapTiles = "map_tiles"
        case mapTilesAttribution = "map_tiles_attribution"
        case webhookTimeoutSeconds = "webhook_timeout_seconds"
        case idleTimeoutSeconds = "idle_timeout_seconds"
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = ServiceConfiguration()
        webhooks = try container.decodeIfPresent([Webhook].self, forKey: .webhooks) ?? []
        sync = try container.decodeIfPresent(Sync.self, forKey: .sync)
        watch = try container.decodeIfPresent(Watch.self, forKey: .watch)
        jobs = try container.decodeIfPresent(Jobs.self, forKey: .jobs) ?? defaults.jobs
        metricsRequireToken = try container.decodeIfPresent(Bool.self, forKey: .metricsRequireToken) ?? false
        maxBodyBytes = try container.decodeIfPresent(Int.self, forKey: .maxBodyBytes) ?? defaults.maxBodyBytes
        webhookMaxAttempts =
            try container.decodeIfPresent(Int.self, forKey: .webhookMaxAttempts) ?? defaults.webhookMaxAttempts
        durableCommits = try container.decodeIfPresent(Bool.self, forKey: .durableCommits) ?? defaults.durableCommits
        webhookTimeoutSeconds =
            try container.decodeIfPresent(Double.self, forKey: .webhookTimeoutSeconds) ?? defaults.webhookTimeoutSeconds
        idleTimeoutSeconds =
            try container.decodeIfPresent(Double.self, forKey: .idleTimeoutSeconds) ?? defaults.idleTimeoutSeconds
        mapTiles = try container.decodeIfPresent(String.self, forKey: .mapTiles).map {
            MapTiles(url: $0, attribution: try container.decodeIfPresent(String.self, forKey: .mapTilesAttribution))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(webhooks, forKey: .webhooks)
        try container.encodeIfPresent(sync, forKey: .sync)
        try container.encodeIfPresent(watch, forKey: .watch)
        try container.encode(jobs, forKey: .jobs)
        try container.encode(metricsRequireToken, forKey: .metricsRequireToken)
        try container.encode(maxBodyBytes, forKey: .maxBodyBytes)
        try container.encode(webhookMaxAttempts, forKey: .webhookMaxAttempts)
        try container.encode(durableCommits, forKey: .durableCommits)
        try container.encodeIfPresent(mapTiles?.url, forKey: .mapTiles)
        try container.encodeIfPresent(mapTiles?.attribution, forKey: .mapTilesAttribution)
        try container.encode(webhookTimeoutSeconds, forKey: .webhookTimeoutSeconds)
        try container.encode(idleTimeoutSeconds, forKey: .idleTimeoutSeconds)
    }

    /// Reads a configuration file; the error names the file and what is wrong.
    package static func load(path: String) throws -> ServiceConfiguration {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ConfigurationError(path: path, reason: "cannot be read: \(error.localizedDescription)")
        }
        let configuration: ServiceConfiguration
        do {
            configuration = try JSONDecoder().decode(ServiceConfiguration.self, from: data)
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context),
            let DecodingError.keyNotFound(_, context), let DecodingError.dataCorrupted(context)
        {
            let field = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            throw ConfigurationError(
                path: path, reason: "\(field.isEmpty ? "" : field + ": ")\(context.debugDescription)")
        }
        for webhook in configuration.webhooks {
            guard let url = URL(string: webhook.url), url.scheme == "http" || url.scheme == "https", url.host != nil
            else {
                throw ConfigurationError(path: path, reason: "webhook url is not an http(s) URL: \(webhook.url)")
            }
        }
        if let sync = configuration.sync {
            guard let url = URL(string: sync.to), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ConfigurationError(path: path, reason: "sync.to is not an http(s) URL: \(sync.to)")
            }
            guard sync.batchSize >= 1, sync.maxAttempts >= 1, sync.timeoutSeconds > 0 else {
                throw ConfigurationError(
                    path: path, reason: "sync.batch_size, sync.max_attempts and sync.timeout_seconds must be positive")
            }
        }
        if let tiles = configuration.mapTiles {
            let plain = tiles.url.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")
            guard let url = URL(string: plain), url.scheme == "http" || url.scheme == "https", url.host != nil,
                ["{z}", "{x}", "{y}"].allSatisfy(tiles.url.contains)
            else {
                throw ConfigurationError(
                    path: path, reason: "map_tiles must be an http(s) URL template with {z}, {x} and {y}: \(tiles.url)")
            }
        }
        if let watch = configuration.watch {
            guard watch.inbox != nil || watch.regions != nil else {
                throw ConfigurationError(
                    path: path,
                    reason: "watch needs an inbox, a regions folder or both: {\"inbox\": \"DIR\", \"regions\": \"DIR\"}"
                )
            }
            var isDirectory: ObjCBool = false
            if let regions = watch.regions,
                !(FileManager.default.fileExists(atPath: regions, isDirectory: &isDirectory) && isDirectory.boolValue)
            {
                throw ConfigurationError(path: path, reason: "watch.regions is not a directory: \(regions)")
            }
            if let inbox = watch.inbox, inbox == watch.regions {
                throw ConfigurationError(path: path, reason: "watch.inbox and watch.regions must be different folders")
            }
        }
        guard configuration.webhookTimeoutSeconds > 0, configuration.idleTimeoutSeconds > 0 else {
            throw ConfigurationError(
                path: path, reason: "webhook_timeout_seconds and idle_timeout_seconds must be positive")
        }
        if Set(configuration.webhooks.map(\.key)).count != configuration.webhooks.count {
            throw ConfigurationError(path: path, reason: "two webhooks share a name (or URL); give them distinct names")
        }
        return configuration
    }

    var webhooksEnabled: Bool { !webhooks.isEmpty && (jobs.webhooks ?? true) }
    var syncEnabled: Bool { sync != nil && (jobs.sync ?? true) }
}

/// A configuration file that cannot be used.
package struct ConfigurationError: Error, CustomStringConvertible {
    package var path: String
    package var reason: String
    package var description: String { "\(path): \(reason)" }
}
