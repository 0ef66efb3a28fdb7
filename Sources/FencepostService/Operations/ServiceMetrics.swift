import FencepostCore
import FencepostStore
import Foundation
import Prometheus
import Synchronization

/// The service's Prometheus metrics, in a registry of its own (no process-wide bootstrap, so
/// several applications, as in tests, do not share counters).
final class ServiceMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let fixesIngested: Counter
    private let fixesDropped: Mutex<[FixDropReason: Counter]> = Mutex([:])
    private let eventsByKind: Mutex<[String: Counter]> = Mutex([:])
    private let requestTimers: Mutex<[String: DurationHistogram]> = Mutex([:])
    private static let latencyBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
    ]

    init() {
        fixesIngested = registry.makeCounter(descriptor: MetricNameDescriptor(
            namespace: "fencepost", metricName: "fixes_ingested", unitName: "total", helpText: "Fixes received by the service."))
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
                    namespace: "fencepost", metricName: "events", unitName: "total", helpText: "Events the service created, by kind."),
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

    /// Records one request's latency under its route (not its raw path, to keep labels few).
    func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        let key = "\(method) \(route) \(status)"
        let histogram = Self.metric(in: requestTimers, for: key) {
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
    func exposition(store: Store) throws -> String {
        for (status, count) in try store.outboxCounts() {
            registry.makeGauge(
                descriptor: MetricNameDescriptor(
                    namespace: "fencepost", metricName: "outbox_depth", unitName: "rows", helpText: "Outbox rows by status."),
                labels: [("status", status)]
            ).set(to: Double(count))
        }
        return registry.emitToString()
    }
}
