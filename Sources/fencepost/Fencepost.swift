import ArgumentParser
import Foundation

@main
struct Fencepost: AsyncParsableCommand {
    /// This build's version (`fencepost --version`); the CHANGELOG says what each holds.
    static let version = "0.9.0"

    static let configuration = CommandConfiguration(
        commandName: "fencepost",
        abstract: "Geofence entry, exit and dwell events from location traces.",
        discussion: """
            Every command works on one store: a SQLite file or a PostgreSQL database, named by \
            --db PATH-OR-URL (postgres://user:password@host:port/database), else $FENCEPOST_DB, \
            else the file $XDG_DATA_HOME/fencepost/fencepost.db \
            (~/.local/share/fencepost/fencepost.db). --db may come before the command too \
            (fencepost --db X.db visits list).

            Exit codes: 0 success; 1 invalid input (nothing was written); 2 sync left something \
            pending or dead-lettered; 3 the store or a file could not be opened, read or written; \
            64 bad command-line usage; 75 another sync is running on the store.
            """,
        version: version,
        subcommands: [
            RegionsCommand.self, IngestCommand.self, ScanCommand.self, WatchCommand.self, HealthCommand.self,
            VisitsCommand.self, EventsCommand.self, SummaryCommand.self, StopsCommand.self, TripsCommand.self,
            DevicesCommand.self,
            QueueCommand.self, ServeCommand.self, TokensCommand.self, SyncCommand.self, RenderCommand.self,
            SimulateDeviceCommand.self, TrackCommand.self, WhereCommand.self, HistoryCommand.self,
        ]
    )

    /// `fencepost --db X COMMAND …` as `fencepost COMMAND … --db X`: the store named before the
    /// command is the one every command's own `--db` defaults to ($FENCEPOST_DB).
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        while let first = arguments.first, first == "--db" || first.hasPrefix("--db=") {
            let value: String
            if first == "--db" {
                guard arguments.count >= 2 else { break }
                value = arguments[1]
                arguments.removeFirst(2)
            } else {
                value = String(first.dropFirst("--db=".count))
                arguments.removeFirst()
            }
            setenv("FENCEPOST_DB", value, 1)
        }
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
