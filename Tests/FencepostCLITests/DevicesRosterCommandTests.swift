import FencepostTestSupport
import Foundation
import Testing

/// `devices plan|apply|list`: the roster as a file under plan/apply, as regions are.
@Suite struct DevicesRosterCommandTests {
    @Test func aRosterIsPlannedAppliedListedAndReappliedAsANoOp() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let csv = try cli.write(
            "roster.csv",
            """
            device,name,groups
            truck-1,"Truck 1, north",night;depot
            truck-2,,depot
            phone-ann,Ann,

            """)
        let plan = try await cli.run("devices", "plan", csv)
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(
            plan.stdout == """
                + add phone-ann "Ann"
                + add truck-1 "Truck 1, north" [depot, night]
                + add truck-2 [depot]
                3 to add, 0 to update, 0 to remove, 0 unchanged

                """)
        #expect(try await cli.run("devices", "apply", csv).status == 0)
        let listed = try await cli.run("devices", "list", "--format", "csv")
        #expect(
            listed.stdout == """
                device,name,groups
                phone-ann,Ann,
                truck-1,"Truck 1, north",depot;night
                truck-2,,depot

                """)
        // The listing is a roster file: applied again, nothing changes.
        let again = try await cli.run("devices", "apply", cli.write("listed.csv", listed.stdout))
        #expect(again.stdout.hasSuffix("0 to add, 0 to update, 0 to remove, 3 unchanged\n"))

        let json = try cli.write(
            "roster.json", #"[{"device":"truck-1","groups":["depot"]},{"device":"truck-3","name":"Spare"}]"#)
        let changed = try await cli.run("devices", "apply", json, "--format", "json")
        #expect(changed.status == 0)
        #expect(
            changed.stdout
                == #"{"add":[{"device":"truck-3","groups":[],"name":"Spare"}],"remove":["phone-ann","truck-2"],"unchanged":0,"update":[{"device":"truck-1","groups":["depot"],"name":null}]}"#
                + "\n")
    }

    @Test func scanTakesTheRosterItsRegionsGroupsSelect() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        // One circle for the depot group, one for everyone, in the same place; a walk through them.
        func circle(_ id: String, _ extra: String) -> String {
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.0,47.0]},"properties":{"id":"\#(id)","radius":100\#(extra)}}"#
        }
        let regions = try cli.write(
            "regions.geojson",
            #"{"type":"FeatureCollection","features":["# + circle("depot", #","groups":["depot"]"#) + ","
                + circle("all", "") + "]}")
        let walk = try cli.write(
            "walk.csv",
            "device,time,lat,lon,accuracy\n"
                + (0...12).map { "truck-1,\(1_750_000_000 + $0 * 60),\(46.9946 + Double($0) * 0.0009),8.0,5" }.joined(
                    separator: "\n") + "\n")
        let roster = try cli.write("roster.csv", "device,groups\ntruck-1,depot\n")
        func regionsOfEvents(_ arguments: String...) async throws -> [String] {
            let scan = try await cli.run(["scan", "--regions", regions] + arguments + [walk])
            #expect(scan.status == 0, "\(scan.stderr)")
            return scan.stdout.split(separator: "\n").dropFirst().map {
                String($0.split(separator: ",")[2...4].joined(separator: " "))
            }
            .sorted()
        }
        #expect(try await regionsOfEvents() == ["enter truck-1 all", "exit truck-1 all"])
        #expect(
            try await regionsOfEvents("--roster", roster) == [
                "enter truck-1 all", "enter truck-1 depot", "exit truck-1 all", "exit truck-1 depot",
            ])
    }

    @Test func aBadRosterIsRefusedWholeWithItsLine() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let twice = try cli.write("twice.csv", "device,groups\na,x\nb,y\na,z\n")
        let refused = try await cli.run("devices", "apply", twice)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("twice.csv:4: line 4: device a is listed twice (nothing was applied)"))
        let badID = try await cli.run("devices", "plan", cli.write("bad.csv", "device\nhas space\n"))
        #expect(badID.status == 1 && badID.stderr.contains("bad.csv:2:"))
        let column = try await cli.run("devices", "plan", cli.write("column.csv", "device,team\na,b\n"))
        #expect(column.status == 1 && column.stderr.contains("unknown column \"team\""))
        #expect(try await cli.run("devices", "plan", cli.path("missing.csv")).status == 3)
        // Nothing was applied by the refusals: not even a store was made.
        let listed = try await cli.run("devices", "list", "--format", "json")
        #expect(listed.status == 3 && listed.stderr.contains("no store at"))
    }
}

/// `regions plan --replay`: what an edit would do to the visits of given traces.
@Suite struct RegionPlanReplayCommandTests {
    static func sites(depotRadius: Int, depotGroups: String, yard: String) -> String {
        func circle(_ id: String, _ radius: Int, _ extra: String) -> String {
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[-8.6254,52.6634]},"properties":{"id":"\#(id)","radius":\#(radius)\#(extra)}}"#
        }
        return #"{"type":"FeatureCollection","features":["#
            + [
                circle("depot", depotRadius, #","groups":\#(depotGroups)"#), circle("yard", 150, yard),
                circle("city-centre", 150, ""),
            ].joined(separator: ",") + "]}"
    }

    @Test func aReplaySaysPerChangedRegionWhichVisitsTheEditAddsRemovesAndChanges() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let before = try cli.write(
            "before.geojson",
            Self.sites(depotRadius: 150, depotGroups: #"["night-shift"]"#, yard: #","devices":["truck-*"]"#))
        #expect(try await cli.run("regions", "apply", before).status == 0)
        #expect(
            try await cli.run(
                "devices", "apply", cli.write("roster.csv", "device,groups\ntruck-1,night-shift\nvan-9,\n")
            ).status == 0)
        // Both devices walk north through the three circles (same centre), 20 m a minute.
        var lines = ["device,time,lat,lon,accuracy"]
        for device in ["truck-1", "van-9"] {
            for minute in 0...40 {
                let lat = 52.6634 - 0.0036 + Double(minute) * 0.00018
                lines.append("\(device),2026-11-25T06:\(String(format: "%02d", minute)):00Z,\(lat),-8.6254,5")
            }
        }
        let walk = try cli.write("walk.csv", lines.joined(separator: "\n") + "\n")
        // The depot grows (its one visit, truck-1's, changes times); the yard opens to every
        // device (van-9 gains a visit, truck-1's stays); the centre is unchanged.
        let after = try cli.write(
            "after.geojson", Self.sites(depotRadius: 200, depotGroups: #"["night-shift","weekend"]"#, yard: ""))
        let plan = try await cli.run("regions", "plan", after, "--replay", walk)
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(
            plan.stdout == """
                ~ update depot: groups, radius
                ~ update yard: devices
                0 to add, 2 to update, 0 to remove, 1 unchanged
                replay: depot: +0 −0 ~1 visits over 1 device
                replay: yard: +1 −0 ~0 visits over 1 device

                """)
        // Nothing was applied.
        #expect(
            try await cli.run("regions", "plan", before).stdout.hasSuffix(
                "0 to add, 0 to update, 0 to remove, 3 unchanged\n"))
    }
}
