import FencepostCore
import FencepostIngest
import FencepostStore
import Foundation
import Prometheus
import Synchronization

/// The service's Prometheus metrics, in a registry of its own (no process-wide bootstrap, so
/// several applications, as in tests, do not share counters).
final class ServiceMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// The sinks' deliveries, failures and lag.
    let sinks: SinkBoard
    private let fixesIngested: Counter
    private let fixesDropped: Mutex<[FixDropReason: Counter]> = Mutex([:])
    private let eventsByKind: Mutex<[String: Counter]> = Mutex([:])
    private let protocolMessages: Mutex<[ProtocolMessage: Counter]> = Mutex([:])
    private let protocolRefusals: Mutex<[String: Counter]> = Mutex([:])
    private let protocolExtras: Mutex<[ProtocolMessage: Counter]> = Mutex([:])
    private let requestTimers: Mutex<[RequestLabels: DurationHistogram]> = Mutex([:])
    private let groupFixes: ValueHistogram
    private let commitTime: DurationHistogram
    private let syncTime: DurationHistogram
    private let restartTime: DurationHistogram
    private let inboxImported: Counter
    private let inboxRefused: Counter
    private let inboxDuplicates: Counter
    private let inboxPending: Gauge
    private let regionApplies: Counter
    private let regionRefusals: Counter
    private static let latencyBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5),
        .seconds(5),
    ]

    init() {
        let registry = self.registry
        sinks = SinkBoard(registry: registry)
        func counter(_ name: String, _ help: String) -> Counter {
            registry.makeCounter(
                descriptor: MetricNameDescriptor(
                    namespace: "fencepost", metricName: name, unitName: "total", helpText: help))
        }
        inboxImported = counter(
            "inbox_files_imported", "Files of the watched inbox imported (traces and Apple Health exports).")
        inboxRefused = counter("inbox_files_refused", "Files of the watched inbox refused, moved to failed/.")
        inboxDuplicates = counter(
            "inbox_files_already_imported",
            "Files of the watched inbox whose content was already imported, moved to done/.")
        inboxPending = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "fencepost", metricName: "inbox_files_pending", unitName: "files",
                helpText: "Files waiting in the watched inbox, complete or not."))
        regionApplies = counter("watch_region_applies", "Region configs of the watched folder applied.")
        regionRefusals = counter(
            "watch_region_refusals", "Region configs of the watched folder refused (the monitored set kept).")
        fixesIngested = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "fencepost", metricName: "fixes_ingested", unitName: "total",
                helpText: "Fixes received by the service."))
        groupFixes = registry.makeValueHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "fencepost", metricName: "writer_group", unitName: "fixes",
                helpText: "Fixes per group the live writer committed in one transaction."),
            buckets: [1, 10, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 20_000])
        commitTime = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "fencepost", metricName: "writer_commit", unitName: "seconds",
                helpText: "Time the live writer took per group: filter, monitor and the transaction with its commit."),
            buckets: Self.latencyBuckets)
        syncTime = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "fencepost", metricName: "writer_sync", unitName: "seconds",
                helpText:
                    "Time to put the write-ahead log on disk before durable answers (one fdatasync for all groups since the last)."
            ),
            buckets: Self.latencyBuckets)
        restartTime = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "fencepost", metricName: "writer_log_restart", unitName: "seconds",
                helpText: "Time the live writer spent checkpointing a grown write-ahead log so it starts over."),
            buckets: Self.latencyBuckets)
    }

    /// What the watcher did.
    func recordWatch(_ report: WatchReport, pending: Int) {
        inboxPending.set(to: Double(pending))
        switch report {
        case .file(_, let outcome, _):
            switch outcome {
            case .ingested, .healthImported: inboxImported.increment()
            case .alreadyImported: inboxDuplicates.increment()
            case .refused: inboxRefused.increment()
            }
        case .regionsApplied: regionApplies.increment()
        case .regionsRefused: regionRefusals.increment()
        case .importFailed, .inboxUnreadable, .regionsFailed: break
        }
    }

    /// Files waiting in the inbox at the watcher's last look.
    func recordInboxPending(_ pending: Int) {
        inboxPending.set(to: Double(pending))
    }

    /// One group the live writer committed.
    func recordGroup(fixes: Int, duration: Duration) {
        groupFixes.record(Double(fixes))
        commitTime.record(duration)
    }

    func recordSync(_ duration: Duration) {
        syncTime.record(duration)
    }

    func recordLogRestart(_ duration: Duration) {
        restartTime.record(duration)
    }

    func recordIngest(fixes: Int, outcome: BatchOutcome) {
        fixesIngested.increment(by: Int64(fixes))
        for (reason, count) in outcome.dropped {
            Self.metric(in: fixesDropped, for: reason) {
                registry.makeCounter(
                    descriptor: MetricNameDescriptor(
                        namespace: "fencepost", metricName: "fixes_dropped", unitName: "total",
                        helpText: "Fixes the filter dropped, by reason."),
                    labels: [("reason", reason.rawValue)])
            }.increment(by: Int64(count))
        }
        for event in outcome.events { eventCounter(event.kind.rawValue).increment() }
    }

    private func eventCounter(_ kind: String) -> Counter {
        Self.metric(in: eventsByKind, for: kind) {
            registry.makeCounter(
                descriptor: MetricNameDescriptor(
                    namespace: "fencepost", metricName: "events", unitName: "total",
                    helpText: "Events the service created, by kind."),
                labels: [("kind", kind)])
        }
    }

    /// The metric for one label value, made on first use.
    private static func metric<Key: Hashable & Sendable, Metric: Sendable>(
        in cache: borrowing Mutex<[Key: Metric]>, for key: Key, make: () -> sending Metric
    ) -> Metric {
        cache.withLock { metrics in
            if let metric = metrics[key] { return metric }
            let metric = make()
            metrics[key] = metric
            return metric
        }
    }

    /// Messages a location protocol received and took, by protocol (`batch`, `owntracks_http`,
    /// `owntracks_mqtt`, `osmand`, `traccar_client`, `overland`, `traccar`) and message type
    /// (`location`, `transition`, `waypoint`, `lwt`, …).
    func recordMessages(protocol name: String, type: String, count: Int = 1) {
        guard count > 0 else { return }
        Self.metric(in: protocolMessages, for: ProtocolMessage(protocol: name, type: type)) {
            registry.makeCounter(
                descriptor: MetricNameDescriptor(
                    namespace: "fencepost", metricName: "protocol_messages", unitName: "total",
                    helpText: "Messages the location protocols took, by protocol and message type."),
                labels: [("protocol", name), ("type", type)])
        }.increment(by: Int64(count))
    }

    /// What phones reported beside their positions (battery, activity, motion…), by protocol
    /// and name, counted per fix that carried it: the store keeps no extras of a fix.
    func recordExtras(protocol name: String, extra: String, count: Int) {
        guard count > 0 else { return }
        Self.metric(in: protocolExtras, for: ProtocolMessage(protocol: name, type: extra)) {
            registry.makeCounter(
                descriptor: MetricNameDescriptor(
                    namespace: "fencepost", metricName: "protocol_extras", unitName: "total",
                    helpText:
                        "Extras phones reported beside positions (battery, activity, motion…), by protocol and name."),
                labels: [("protocol", name), ("extra", extra)])
        }.increment(by: Int64(count))
    }

    /// A message of a location protocol refused whole (malformed, invalid, not allowed).
    func recordRefusedMessage(protocol name: String) {
        Self.metric(in: protocolRefusals, for: name) {
            registry.makeCounter(
                descriptor: MetricNameDescriptor(
                    namespace: "fencepost", metricName: "protocol_messages_refused", unitName: "total",
                    helpText: "Messages of the location protocols refused whole, by protocol."),
                labels: [("protocol", name)])
        }.increment()
    }

    private struct ProtocolMessage: Hashable, Sendable {
        var `protocol`: String
        var type: String
    }

    /// Records one request's latency under its route (not its raw path, to keep labels few).
    func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        let labels = RequestLabels(route: route, method: method, status: status)
        let histogram = Self.metric(in: requestTimers, for: labels) {
            registry.makeDurationHistogram(
                descriptor: MetricNameDescriptor(
                    namespace: "fencepost", metricName: "http_request_duration", unitName: "seconds",
                    helpText: "Request latency by route, method and status."),
                labels: [("route", route), ("method", method), ("status", String(status))],
                buckets: Self.latencyBuckets)
        }
        histogram.record(duration)
    }

    /// The exposition text, with the outbox depth read from the store at scrape time.
    func exposition(store: Store) async throws -> String {
        let counts = try await store.outboxCounts()
        try await sinks.refreshLag(store: store)
        for status in OutboxStatus.allCases {
            registry.makeGauge(
                descriptor: MetricNameDescriptor(
                    namespace: "fencepost", metricName: "outbox_depth", unitName: "rows",
                    helpText: "Outbox rows by status."),
                labels: [("status", status.rawValue)]
            ).set(to: Double(counts[status] ?? 0))
        }
        return registry.emitToString()
    }
}

/// A request histogram's labels, as its key among the made ones: the strings as they come, not
/// a string made of them per request.
private struct RequestLabels: Hashable, Sendable {
    var route: String
    var method: String
    var status: Int
}
