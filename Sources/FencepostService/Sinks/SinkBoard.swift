import FencepostStore
import Foundation
import Prometheus
import Synchronization

/// What this instance knows of each sink's delivery, for `GET /v1/sinks` and `/metrics`:
/// its state, what it delivered and what failed. The cursor and the lag come from the store
/// (they are the same on every instance).
final class SinkBoard: Sendable {
    /// Where a sink's delivery stands on this instance.
    enum State: String, Sendable {
        /// Not yet started.
        case starting
        /// Another instance holds the sink's lease and delivers.
        case standby
        /// Caught up, waiting for new events.
        case idle
        /// Sending events.
        case delivering
        /// The last try failed; waiting to try again.
        case retrying
    }

    struct Status: Sendable {
        var name: String
        var type: String
        var cursorKey: String
        var state: State = .starting
        var delivered = 0
        var failures = 0
        var deadLettered = 0
        var lastError: String?
        var lastErrorAt: Date?
    }

    private struct Meters: Sendable {
        var deliveries: Counter
        var failures: Counter
        var deadLetters: Counter
        var lagRows: Gauge
        var lagSeconds: Gauge
    }

    private let registry: PrometheusCollectorRegistry
    private let statuses = Mutex<[Status]>([])
    private let meters = Mutex<[String: Meters]>([:])

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    /// Adds a sink (at start-up, in configuration order).
    func register(_ sink: any OutboxSink) {
        let labels = [("sink", sink.name), ("type", sink.type)]
        func descriptor(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "fencepost", metricName: name, unitName: unit, helpText: help)
        }
        let meters = Meters(
            deliveries: registry.makeCounter(
                descriptor: descriptor("sink_deliveries", "total", "Events a sink's other side confirmed."),
                labels: labels),
            failures: registry.makeCounter(
                descriptor: descriptor(
                    "sink_failures", "total", "Failed tries to deliver to a sink (each retried or dead-lettered)."),
                labels: labels),
            deadLetters: registry.makeCounter(
                descriptor: descriptor(
                    "sink_dead_letters", "total", "Events a sink gave up on (the dead-letter list)."),
                labels: labels),
            lagRows: registry.makeGauge(
                descriptor: descriptor("sink_lag", "rows", "Events committed and not yet delivered to a sink."),
                labels: labels),
            lagSeconds: registry.makeGauge(
                descriptor: descriptor(
                    "sink_lag", "seconds", "How long the oldest event not yet delivered to a sink has waited."),
                labels: labels))
        self.meters.withLock { $0[sink.name] = meters }
        statuses.withLock {
            $0.append(Status(name: sink.name, type: sink.type, cursorKey: sink.cursorKey))
        }
    }

    var all: [Status] { statuses.withLock { $0 } }

    func set(_ sink: String, _ state: State) {
        update(sink) { $0.state = state }
    }

    func delivered(_ sink: String, count: Int) {
        guard count > 0 else { return }
        update(sink) { $0.delivered += count }
        meters.withLock { $0[sink] }?.deliveries.increment(by: Int64(count))
    }

    func failed(_ sink: String, _ failure: SinkFailure, at now: Date = Date()) {
        update(sink) { status in
            status.failures += 1
            status.lastError = failure.message
            status.lastErrorAt = now
        }
        meters.withLock { $0[sink] }?.failures.increment()
    }

    func deadLettered(_ sink: String) {
        update(sink) { $0.deadLettered += 1 }
        meters.withLock { $0[sink] }?.deadLetters.increment()
    }

    /// Sets the lag gauges from the store (at each scrape of `/metrics`).
    func refreshLag(store: Store, at now: Date = Date()) async throws {
        for status in all {
            guard let position = try await store.deliveryPosition(status.cursorKey),
                let meters = meters.withLock({ $0[status.name] })
            else { continue }
            meters.lagRows.set(to: Double(position.backlog.rows))
            meters.lagSeconds.set(to: position.backlog.lagSeconds(at: now))
        }
    }

    private func update(_ sink: String, _ change: (inout Status) -> Void) {
        statuses.withLock { statuses in
            if let index = statuses.firstIndex(where: { $0.name == sink }) { change(&statuses[index]) }
        }
    }
}
