import FencepostTestSupport
import Foundation
import Testing

/// The project's own scripts, where they meet the machine: run as root from a checkout in a
/// folder only root may enter (root's home is 0700 on Debian), `tools/postgres` must still start
/// a cluster, whose server runs as `postgres`.
@Suite struct ProjectToolsTests {
    static var isRoot: Bool { getuid() == 0 }
    static var hasPostgres: Bool { FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/15/bin/initdb") }

    @Test(
        "tools/postgres starts, serves and stops a cluster from a checkout under a 0700 folder",
        .enabled(if: isRoot && hasPostgres, "needs root and PostgreSQL 15 (tools/setup installs it)"))
    func postgresFromAPrivateCheckout() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-home-\(UUID().uuidString)")
        let tools = home.appendingPathComponent("checkout/tools")
        try FileManager.default.createDirectory(at: tools, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: home.path)
        defer { try? FileManager.default.removeItem(at: home) }
        let script = tools.appendingPathComponent("postgres")
        try FileManager.default.copyItem(
            at: TestData.packageRoot.appendingPathComponent("tools/postgres"), to: script)

        let started = try await run(script.path, "start", "private")
        #expect(started.status == 0, "\(started.output)")
        let url = started.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(url.hasPrefix("postgres://postgres@127.0.0.1:"), "\(url)")
        let query = try await run("/usr/bin/psql", url, "-Atc", "SELECT 40 + 2")
        #expect(query.output.trimmingCharacters(in: .whitespacesAndNewlines) == "42", "\(query.output)")
        let stopped = try await run(script.path, "stop")
        #expect(stopped.status == 0, "\(stopped.output)")
    }

    /// Runs a command to its end, its output in a file (a server the script starts would hold
    /// a pipe open for ever), waited for with `waitpid` itself: Foundation's `Process` missed the
    /// exit of a script whose daemon outlives it.
    private func run(_ executable: String, _ arguments: String...) async throws -> (status: Int32, output: String) {
        try await offThePool {
            let log = FileManager.default.temporaryDirectory.appendingPathComponent(
                "fencepost-\(UUID().uuidString).log")
            defer { try? FileManager.default.removeItem(at: log) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid: pid_t = 0
            let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
            guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
            return (exitStatus, String(decoding: try Data(contentsOf: log), as: UTF8.self))
        }
    }
}
