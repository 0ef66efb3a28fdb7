import ArgumentParser
import Foundation

struct SinksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sinks",
        abstract: "Deliver events to Redis, NATS and MQTT while the broker restarts and serve is killed.",
        discussion: """
            Per sink, serve takes devices' fixes (posted batches) that make about --events \
            events and delivers them to a broker of its own (tools/redis, tools/nats, \
            tools/mosquitto); at random points of the load the broker is restarted \
            --broker-restarts times and serve is SIGKILLed --kills times and started again. When \
            the sink has caught up, an independent consumer (redis-py XRANGE, a nats-py ordered \
            consumer, a paho-mqtt QoS 1 subscriber with a persistent session that ran throughout) \
            must have every event of the store, each device's in the store's order; Redis and \
            NATS each id once; MQTT repeats an id only with a restart or a kill between the two \
            copies. Exit 1 otherwise.
            """)

    @OptionGroup var options: CampaignOptions

    @Option(help: "Sinks, comma-separated: redis, nats, mqtt.")
    var sinks = "redis,nats,mqtt"
    @Option(help: "About how many events each sink is sent.")
    var events = 100_000
    @Option(help: "Devices posting at once.")
    var devices = 8
    @Option(help: "Fixes per posted batch.")
    var batch = 100
    @Option(help: "Times the broker is restarted, per sink.")
    var brokerRestarts = 10
    @Option(help: "Times serve is SIGKILLed and started again, per sink.")
    var kills = 5

    func validate() throws {
        guard events >= 2, devices >= 1, batch >= 1, brokerRestarts >= 0, kills >= 0 else {
            throw ValidationError(
                "events (at least 2), devices and batch must be positive; restarts and kills not negative.")
        }
        let unknown = Set(sinks.split(separator: ",").map(String.init)).subtracting(["redis", "nats", "mqtt"])
        guard unknown.isEmpty else {
            throw ValidationError("unknown sinks: \(unknown.sorted().joined(separator: ", ")) (redis, nats, mqtt)")
        }
    }

    func run() async throws {
        let results = try await options.withWorkFolder { work in
            let campaign = SinkCampaign(
                fencepost: options.executable, work: work, seed: options.seed, events: events, devices: devices,
                batch: batch, brokerRestarts: brokerRestarts, kills: kills, log: options.logger)
            var results: [SinkCampaign.Result] = []
            for sink in sinks.split(separator: ",") { results.append(try await campaign.run(String(sink))) }
            return results
        }
        if options.json {
            try printJSON(results)
        } else {
            print(
                table(
                    [
                        "sink", "events", "broker restarts", "kills", "received", "lost", "unknown",
                        "devices out of order",
                        "duplicates", "duplicates without a restart", "seconds",
                    ],
                    results.map { result in
                        [
                            result.sink, "\(result.events)", "\(result.brokerRestarts)", "\(result.kills)",
                            "\(result.received)", "\(result.lost)", "\(result.unknown)", "\(result.devicesOutOfOrder)",
                            "\(result.duplicates)", "\(result.duplicatesWithoutRestart)",
                            String(format: "%.0f", result.seconds),
                        ]
                    }))
            for result in results {
                for example in result.examples { print("\(result.sink): \(example)") }
            }
        }
        if results.contains(where: { !$0.passed }) { throw ExitCode(1) }
    }
}
