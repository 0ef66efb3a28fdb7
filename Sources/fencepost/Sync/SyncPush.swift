import ArgumentParser
import FencepostCore
import FencepostStore
import FencepostSync
import Foundation

struct SyncPush: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send the outbox to the backend, in order, until it is drained.",
        discussion: """
            A mutation leaves the queue only when the backend acknowledged it (applied, or a duplicate \
            of one it applied before). Connection errors, timeouts, 5xx and 429 are retried after 0 s, \
            1 s, 3 s, then doubling with jitter up to 5 minutes, until failures have gone on for \
            --give-up-after seconds; what is left stays queued for the next push. A mutation the \
            backend rejects (4xx), or one past --max-attempts, goes to the dead-letter list \
            (fencepost sync dead-letter list). Exit 0 when the queue is drained, 2 when anything is \
            left pending or dead-lettered.
            """)

    @OptionGroup var store: StoreOptions
    @OptionGroup var backend: BackendOptions

    @Option(help: "Mutations per request.")
    var batch = 500

    @Option(help: "Attempts that reached the backend before a mutation is dead-lettered.")
    var maxAttempts = 10

    @Option(help: "Seconds of failing requests after which the push stops (the rest stays queued).")
    var giveUpAfter: Double = 120

    @Flag(help: "Print the report as JSON on stdout.")
    var json = false

    func validate() throws {
        guard (1...10_000).contains(batch), (1...1_000).contains(maxAttempts), (0...604_800).contains(giveUpAfter)
        else {
            throw ValidationError(
                "--batch must be 1…10000, --max-attempts 1…1000, --give-up-after 0…604800 seconds (a week).")
        }
    }

    func run() async throws {
        let endpoint = try backend.endpoint()
        let store: Store = try await self.store.open(createIfMissing: false)
        try await backend.exclusively(store) {
            let settings = PushSettings(
                batchSize: batch, maxAttempts: maxAttempts, giveUpAfter: .milliseconds(Int64(giveUpAfter * 1000)))
            var progress = Progress()
            let started = Date()
            let report = try await CommandFailure.reporting {
                try await withHTTPClient { client in
                    try await SyncPusher(store: store, endpoint: endpoint, settings: settings, client: client).push {
                        report in
                        progress.update(
                            "pushed \(report.delivered), dead-lettered \(report.deadLettered), failed requests \(report.failedRequests)"
                        )
                    }
                }
            }
            progress.clear()
            let status = try await CommandFailure.reporting { try await store.syncStatus() }
            let seconds = Date().timeIntervalSince(started)
            let left = (status.counts[.pending] ?? 0) + (status.counts[.inflight] ?? 0)
            let dead = status.counts[.dead] ?? 0
            var lines = [
                "pushed \(report.delivered) mutations in \(report.requests) requests (\(report.failedRequests) failed) in "
                    + String(format: "%.1f s", seconds) + "; dead-lettered \(report.deadLettered)"
            ]
            switch report.ending {
            case .drained: break
            case .gaveUp(let reason):
                lines.append("stopped retrying after \(Int(giveUpAfter)) s of failures: \(reason)")
            case .refused(let reason): lines.append("error: the backend refused the requests: \(reason)")
            }
            lines.append("queue: \(left) pending, \(dead) dead-lettered, \(status.counts[.delivered] ?? 0) delivered")
            if json {
                Console.output(
                    try JSONValueEncoder.canonicalText(PushJSON(report, pending: left, dead: dead, seconds: seconds)))
            }
            Console.error(lines)
            if left > 0 || dead > 0 { throw SyncCommand.incomplete }
        }
    }
}

/// `sync push --json`.
private struct PushJSON: Encodable {
    var delivered: Int
    var deadLettered: Int
    var requests: Int
    var failedRequests: Int
    var pending: Int
    var dead: Int
    /// To the millisecond.
    var seconds: Double
    /// drained, gave_up or refused.
    var ending: String
    /// Why it gave up or was refused.
    var error: String?

    enum CodingKeys: String, CodingKey {
        case delivered
        case deadLettered = "dead_lettered"
        case requests
        case failedRequests = "failed_requests"
        case pending, dead, seconds, ending, error
    }

    init(_ report: PushReport, pending: Int, dead: Int, seconds: Double) {
        delivered = report.delivered
        deadLettered = report.deadLettered
        requests = report.requests
        failedRequests = report.failedRequests
        self.pending = pending
        self.dead = dead
        self.seconds = (seconds * 1000).rounded() / 1000
        switch report.ending {
        case .drained: ending = "drained"
        case .gaveUp(let reason): (ending, error) = ("gave_up", reason)
        case .refused(let reason): (ending, error) = ("refused", reason)
        }
    }
}
