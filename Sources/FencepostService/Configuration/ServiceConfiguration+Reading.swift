import FencepostCore
import Foundation

/// Reading `serve --config FILE`: every key checked for its type and range, unknown keys
/// refused, each error located (``ConfigObject``).
extension ServiceConfiguration {
    init(reading config: ConfigObject) throws(ConfigurationError) {
        try config.allowOnly([
            "webhooks", "sync", "jobs", "watch", "metrics_require_token", "max_body_bytes", "webhook_max_attempts",
            "durable_commits", "map_tiles", "map_tiles_attribution", "webhook_timeout_seconds",
            "idle_timeout_seconds", "owntracks_waypoints", "mqtt", "transition_window_seconds",
            "replayed_after_seconds", "sinks",
        ])
        let defaults = ServiceConfiguration()
        self.init()
        webhooks = try (config.objects("webhooks") ?? []).map { (item) throws(ConfigurationError) in
            try Webhook(reading: item)
        }
        sinks = try (config.objects("sinks") ?? []).map { (item) throws(ConfigurationError) in
            try Sink(reading: item)
        }
        sync = try config.object("sync").map { (item) throws(ConfigurationError) in try Sync(reading: item) }
        mqtt = try config.object("mqtt").map { (item) throws(ConfigurationError) in try MQTT(reading: item) }
        watch = try config.object("watch").map { (item) throws(ConfigurationError) in try Watch(reading: item) }
        jobs =
            try config.object("jobs").map { (item) throws(ConfigurationError) in try Jobs(reading: item) }
            ?? defaults.jobs
        metricsRequireToken = try config.bool("metrics_require_token") ?? defaults.metricsRequireToken
        maxBodyBytes = try config.integer("max_body_bytes", in: 1_024...(1 << 30)) ?? defaults.maxBodyBytes
        webhookMaxAttempts = try config.integer("webhook_max_attempts", in: 1...1_000) ?? defaults.webhookMaxAttempts
        durableCommits = try config.bool("durable_commits") ?? defaults.durableCommits
        ownTracksWaypoints = try config.bool("owntracks_waypoints") ?? defaults.ownTracksWaypoints
        transitionWindowSeconds =
            try config.number("transition_window_seconds", in: 0...86_400) ?? defaults.transitionWindowSeconds
        replayedAfterSeconds =
            try config.number("replayed_after_seconds", in: 0...31_536_000) ?? defaults.replayedAfterSeconds
        webhookTimeoutSeconds =
            try config.number("webhook_timeout_seconds", in: 0.001...3_600) ?? defaults.webhookTimeoutSeconds
        idleTimeoutSeconds =
            try config.number("idle_timeout_seconds", in: 0.001...86_400) ?? defaults.idleTimeoutSeconds
        if let url = try config.string("map_tiles") {
            let plain = url.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")
            guard Self.isHTTP(plain), ["{z}", "{x}", "{y}"].allSatisfy(url.contains) else {
                throw config.invalid("map_tiles", "must be an http(s) URL template with {z}, {x} and {y}: \(url)")
            }
            mapTiles = MapTiles(url: url, attribution: try config.string("map_tiles_attribution"))
        } else if try config.string("map_tiles_attribution") != nil {
            throw config.invalid("map_tiles_attribution", "given without map_tiles")
        }
        if Set(webhooks.map(\.key)).count != webhooks.count {
            throw config.invalid("webhooks", "two webhooks share a name (or URL); give them distinct names")
        }
        if let repeated = sinks.map(\.name).firstRepeated {
            throw config.invalid("sinks", "two sinks are named \"\(repeated)\"; give them distinct names")
        }
    }

    /// An absolute http(s) URL with a host.
    static func isHTTP(_ text: String) -> Bool {
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            return false
        }
        return true
    }
}

extension ServiceConfiguration.Webhook {
    init(reading config: ConfigObject) throws(ConfigurationError) {
        try config.allowOnly(["name", "url", "secret", "template", "template_tz", "method", "headers"])
        self.init(
            name: try config.string("name"), url: try config.requiredString("url"),
            secret: try config.requiredString("secret"), method: try config.string("method") ?? "POST",
            headers: try config.stringMap("headers") ?? [:])
        let webhook = name ?? url
        let plainURL = WebhookTemplate.fill(
            url, with: Dictionary(uniqueKeysWithValues: WebhookTemplate.placeholders.map { ($0, "x") }))
        guard ServiceConfiguration.isHTTP(plainURL) else {
            throw config.invalid("url", "webhook \(webhook): is not an http(s) URL: \(url)")
        }
        for unknown in WebhookTemplate.unknownPlaceholders(in: .string(url)) {
            throw config.invalid("url", "webhook \(webhook): unknown placeholder {{\(unknown)}}")
        }
        guard method == "POST" || method == "PUT" else {
            throw config.invalid("method", "webhook \(webhook): must be POST or PUT, got \(method)")
        }
        let zone = try config.string("template_tz") ?? "UTC"
        guard TimeZone(identifier: zone) != nil else {
            throw config.invalid("template_tz", "webhook \(webhook): unknown time zone \(zone)")
        }
        if let body = config.json("template") {
            for unknown in WebhookTemplate.unknownPlaceholders(in: body) {
                throw config.invalid(
                    "template",
                    "webhook \(webhook): unknown placeholder {{\(unknown)}} (known: \(WebhookTemplate.placeholders.joined(separator: ", ")))"
                )
            }
            template = WebhookTemplate(body: body, zone: zone)
        } else if try config.string("template_tz") != nil {
            throw config.invalid("template_tz", "webhook \(webhook): given without template")
        }
    }
}

extension ServiceConfiguration.Sync {
    init(reading config: ConfigObject) throws(ConfigurationError) {
        try config.allowOnly(["to", "token", "batch_size", "max_attempts", "timeout_seconds"])
        let defaults = Self(to: "", token: "")
        self.init(
            to: try config.requiredString("to"), token: try config.requiredString("token"),
            batchSize: try config.integer("batch_size", in: 1...10_000) ?? defaults.batchSize,
            maxAttempts: try config.integer("max_attempts", in: 1...1_000) ?? defaults.maxAttempts,
            timeoutSeconds: try config.number("timeout_seconds", in: 0.001...3_600) ?? defaults.timeoutSeconds)
        guard ServiceConfiguration.isHTTP(to) else { throw config.invalid("to", "is not an http(s) URL: \(to)") }
    }
}

extension ServiceConfiguration.Jobs {
    init(reading config: ConfigObject) throws(ConfigurationError) {
        try config.allowOnly(["webhooks", "sync", "outbox_cleanup", "outbox_retention_days", "history_prune"])
        let defaults = Self()
        self.init(
            webhooks: try config.bool("webhooks"), sync: try config.bool("sync"),
            outboxCleanup: try config.bool("outbox_cleanup") ?? defaults.outboxCleanup,
            outboxRetentionDays: try config.number("outbox_retention_days", in: 0...36_500)
                ?? defaults.outboxRetentionDays)
        historyPrune = try config.bool("history_prune") ?? defaults.historyPrune
    }
}

extension ServiceConfiguration.Watch {
    init(reading config: ConfigObject) throws(ConfigurationError) {
        try config.allowOnly(["inbox", "regions"])
        self.init(inbox: try config.string("inbox"), regions: try config.string("regions"))
        guard inbox != nil || regions != nil else {
            throw config.invalid("", #"needs an inbox, a regions folder or both: {"inbox": "DIR", "regions": "DIR"}"#)
        }
        var isDirectory: ObjCBool = false
        if let regions,
            !(FileManager.default.fileExists(atPath: regions, isDirectory: &isDirectory) && isDirectory.boolValue)
        {
            throw config.invalid("regions", "is not a directory: \(regions)")
        }
        if let inbox, inbox == regions {
            throw config.invalid("inbox", "must be a different folder from regions")
        }
    }
}

extension Array where Element: Hashable {
    /// The first element that appeared before.
    fileprivate var firstRepeated: Element? {
        var seen: Set<Element> = []
        return first { !seen.insert($0).inserted }
    }
}
