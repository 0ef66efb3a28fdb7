import FencepostStore
import Testing

/// What `--db` accepts as a PostgreSQL URL, and what it prints back (never the password).
struct StoreLocationTests {
    @Test func aConnectTimeoutIsReadAndKeptInTheLocation() throws {
        guard case .postgres(let url) = try StoreLocation("postgres://app:secret@db:6432/fleet?connect_timeout=25")
        else {
            Issue.record("not read as PostgreSQL")
            return
        }
        #expect(url.connectTimeout == .seconds(25))
        #expect(url.description == "postgres://app@db:6432/fleet?connect_timeout=25")
        // Reopening from the printed location keeps the wait.
        guard case .postgres(let again) = try StoreLocation(url.description) else {
            Issue.record("the printed location is not read as PostgreSQL")
            return
        }
        #expect(again.connectTimeout == .seconds(25))
    }

    @Test func withoutOneTheDefaultsStand() throws {
        guard case .postgres(let url) = try StoreLocation("postgresql://app@db/fleet?host=/run/postgresql") else {
            Issue.record("not read as PostgreSQL")
            return
        }
        #expect(url.connectTimeout == nil)
        #expect(url.description == "postgres://app@/fleet?host=/run/postgresql/.s.PGSQL.5432")
    }

    @Test(arguments: ["0", "-3", "2.5", "soon", "3601"])
    func aBadConnectTimeoutIsRefusedNamingIt(value: String) {
        #expect {
            _ = try StoreLocation("postgres://app@db/fleet?connect_timeout=\(value)")
        } throws: { error in
            "\(error)".contains("connect_timeout \(value)")
        }
    }
}
