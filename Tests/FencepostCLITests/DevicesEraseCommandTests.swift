import FencepostTestSupport
import Foundation
import Testing

/// `fencepost devices erase`: says what it removed, queues the deletes, and converges.
@Suite struct DevicesEraseCommandTests {
    @Test func eraseSaysWhatItRemovedAndConverges() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let regions = TestData.packageRoot.appendingPathComponent("regions").path
        let trace = TestData.packageRoot.appendingPathComponent("samples/bus304_to_UL_2019-02-18.gpx").path
        #expect(try await cli.run("regions", "apply", regions).status == 0)
        #expect(try await cli.run("ingest", "--device", "bus", trace).status == 0)

        let erased = try await cli.run("devices", "erase", "bus")
        #expect(erased.status == 0)
        #expect(erased.stdout.hasPrefix("erased bus: devices 1, events 97, fix_history "), "\(erased.stdout)")
        #expect(erased.stdout.contains("visits 36; 133 deletes queued in the outbox"))
        #expect(try await cli.run("visits", "list").stdout.hasSuffix("0 visits\n"))
        let queue = try await cli.run("queue", "status", "--format", "json")
        #expect(queue.status == 0)

        let again = try await cli.run("devices", "erase", "bus", "--json")
        #expect(again.stdout == #"{"device":"bus","outbox_deletes":0,"removed":{}}"# + "\n")
        #expect(try await cli.run("devices", "erase").status == 64)
    }
}
