import FencepostIngest

/// The live writer's reports, into the service's metrics and its change signal (streams and
/// webhooks wake on it).
struct LiveIngestReport: LiveIngestReporting {
    let metrics: ServiceMetrics
    let signal: ChangeSignal

    func committedGroup(fixes: Int, duration: Duration) { metrics.recordGroup(fixes: fixes, duration: duration) }
    func ingested(fixes: Int, outcome: BatchOutcome) { metrics.recordIngest(fixes: fixes, outcome: outcome) }
    func synced(duration: Duration) { metrics.recordSync(duration) }
    func keptStoreSmall(duration: Duration) { metrics.recordLogRestart(duration) }
    func newEvents() { signal.notify() }
}
