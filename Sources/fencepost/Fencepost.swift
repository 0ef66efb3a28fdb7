import ArgumentParser

@main
struct Fencepost: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fencepost",
        abstract: "Geofence entry, exit and dwell events from location traces.",
        discussion: """
            Every command works on one store: a SQLite file or a PostgreSQL database, named by \
            --db PATH-OR-URL (postgres://user:password@host:port/database), else $FENCEPOST_DB, \
            else the file $XDG_DATA_HOME/fencepost/fencepost.db \
            (~/.local/share/fencepost/fencepost.db).

            Exit codes: 0 success; 1 invalid input (nothing was written); 2 sync left something \
            pending or dead-lettered; 3 the store or a file could not be opened, read or written; \
            64 bad command-line usage; 75 another sync is running on the store.
            """,
        subcommands: [
            RegionsCommand.self, IngestCommand.self, ScanCommand.self, WatchCommand.self, HealthCommand.self,
            VisitsCommand.self, EventsCommand.self, DevicesCommand.self,
            QueueCommand.self, ServeCommand.self, TokensCommand.self, SyncCommand.self, RenderCommand.self,
        ]
    )
}
