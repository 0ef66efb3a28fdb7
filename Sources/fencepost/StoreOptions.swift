import ArgumentParser
import FencepostStore
import Foundation

/// The `--db` option every command that touches the store takes.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The SQLite database to use.",
        discussion: "Defaults to $FENCEPOST_DB, else $XDG_DATA_HOME/fencepost/fencepost.db.",
        valueName: "path"))
    var db: String?

    var path: String {
        db ?? StoreLocation.defaultPath(environment: ProcessInfo.processInfo.environment)
    }

    /// Opens the store; a failure becomes exit code 3 with the reason on stderr.
    func open() throws -> Store {
        do {
            return try Store(path: path)
        } catch {
            throw CommandFailure.io("cannot open the store at \(path): \(error)")
        }
    }
}
