import FencepostServerTestSupport
import FencepostStore
import Foundation
import Synchronization
import Testing

/// A statement awaited on a connection the server cuts (a restart, an administrator) ends,
/// with "unavailable", rather than hold its request for ever; the store goes on with a new one.
@Suite(.enabled(if: TestStores.onPostgres, "needs FENCEPOST_TEST_POSTGRES (tools/test's second run)"))
struct PostgresConnectionLossTests {
    @Test func aStatementWhoseConnectionIsCutEndsAndTheStoreGoesOn() async throws {
        let store = try await TestStores.fresh()
        let other = try await Store.open(store.location)
        let backend = Mutex<Int64?>(nil)
        let cutter = Task {
            while backend.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(10)) }
            let pid = backend.withLock { $0 }!
            // Terminated while it sleeps, as a server restart would cut it.
            try await Task.sleep(for: .milliseconds(200))
            return try await other.write { tx in
                try await tx.value("SELECT pg_terminate_backend(CAST(? AS INTEGER))", pid) as Bool?
            }
        }
        await #expect(throws: StoreUnavailable.self) {
            try await store.write { tx in
                let pid: Int64? = try await tx.value("SELECT pg_backend_pid()")
                backend.withLock { $0 = pid }
                // Were the cut not heard, this would end after a minute without an error.
                try await tx.execute("SELECT pg_sleep(60)")
            }
        }
        #expect(try await cutter.value == true)
        #expect(try await store.read { tx in try await tx.value("SELECT 1") as Int64? } == 1)
        await other.close()
        await store.close()
    }
}
