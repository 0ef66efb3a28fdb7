import ArgumentParser
import FencepostStore
import Foundation

/// The `--db` option every command that touches the store takes.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The store: a SQLite file (created when missing) or a postgres://user:password@host:port/database URL.",
        discussion: "Defaults to $FENCEPOST_DB, else $XDG_DATA_HOME/fencepost/fencepost.db.",
        valueName: "path-or-url"))
    var db: String?

    var path: String {
        db ?? StoreLocation.defaultPath(environment: ProcessInfo.processInfo.environment)
    }

    /// Opens the store; a failure is reported on stderr as one line and exit code 3.
    func open() async throws -> Store {
        try await CommandFailure.reporting {
            do {
                return try await Store.open(path)
            } catch let error as StoreOpenError {
                throw CommandFailure.io("error: cannot open the store: \(error)")
            } catch {
                throw CommandFailure.io("error: cannot open the store at \(path): \(error)")
            }
        }
    }
}
