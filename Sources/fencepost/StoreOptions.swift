import ArgumentParser
import FencepostStore
import Foundation

/// The `--db` option every command that touches the store takes.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store: a SQLite file (created when missing) or a postgres://user:password@host:port/database URL.",
            discussion: "Defaults to $FENCEPOST_DB, else $XDG_DATA_HOME/fencepost/fencepost.db.",
            valueName: "path-or-url"))
    var db: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Seconds to wait for another process's write lock on a SQLite store before giving up (exit 3, naming the holder).",
            valueName: "seconds"))
    var busyTimeout: Double = 30

    func validate() throws {
        guard (0...86_400).contains(busyTimeout) else {
            throw ValidationError("--busy-timeout must be from 0 to 86400 seconds (a day).")
        }
    }

    var path: String {
        db ?? Store.defaultLocation(environment: ProcessInfo.processInfo.environment)
    }

    /// A store named explicitly (`--db`, `$FENCEPOST_DB`) is made only in a folder that exists:
    /// a typo in the path must not leave folders and an empty store behind. The default
    /// location's folders are made.
    private func checkFolder(creating: Bool) throws {
        let environment = ProcessInfo.processInfo.environment
        guard creating, db != nil || environment["FENCEPOST_DB"].map({ !$0.isEmpty }) == true,
            !path.contains("://"), !FileManager.default.fileExists(atPath: path)
        else { return }
        if let problem = OutputSink.folderProblem(of: path) {
            throw CommandFailure.io("error: cannot create the store \(path): \(problem)")
        }
    }

    /// The store if it exists (nil for a SQLite file not made yet); any other failure to open
    /// it is reported as ``open(createIfMissing:)`` reports it.
    func openIfPresent() async throws -> Store? {
        do {
            return try await Store.open(path, busyTimeout: busyTimeout, createIfMissing: false)
        } catch StoreOpenError.missing {
            return nil
        } catch {
            return try await open(createIfMissing: false)
        }
    }

    /// Opens the store; a failure is reported on stderr as one line and exit code 3. With
    /// `createIfMissing` false (commands that only read), a missing SQLite file is such a
    /// failure rather than made empty. With `poolAsService`, a PostgreSQL store's connection
    /// pool is left to the caller's service group (``Store/poolService``).
    func open(createIfMissing: Bool = true, poolAsService: Bool = false) async throws -> Store {
        try await CommandFailure.reporting {
            try checkFolder(creating: createIfMissing)
            do {
                return try await Store.open(
                    path, busyTimeout: busyTimeout, createIfMissing: createIfMissing, poolAsService: poolAsService)
            } catch StoreOpenError.missing(let path) {
                throw CommandFailure.io(
                    "error: no store at \(path) (check --db or FENCEPOST_DB; `fencepost regions apply` or `fencepost ingest` creates one)"
                )
            } catch let error as StoreOpenError {
                throw CommandFailure.io("error: cannot open the store: \(error)")
            } catch let error as StoreUnavailable {
                throw CommandFailure.io("error: cannot open the store: \(error)")
            } catch {
                throw CommandFailure.io("error: cannot open the store at \(path): \(error)")
            }
        }
    }
}
