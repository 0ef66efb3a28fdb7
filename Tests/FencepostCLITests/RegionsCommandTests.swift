import FencepostTestSupport
import Foundation
import Testing

@Suite struct RegionsCommandTests {
    static func circle(_ id: String, lon: Double = -8.62, radius: Double = 25, name: String = "stop") -> String {
        #"{"type":"Feature","geometry":{"type":"Point","coordinates":[\#(lon),52.66]},"properties":{"id":"\#(id)","name":"\#(name)","radius":\#(radius)}}"#
    }

    static func config(_ features: String...) -> String {
        #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ",\n"))]}"#
    }

    @Test func planApplyReapplyAndList() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        try cli.write("regions/a.geojson", Self.config(Self.circle("a"), Self.circle("b")))
        try cli.write("regions/c.geojson", Self.config(Self.circle("c")))
        try cli.write("regions/notes.txt", "not a region file")
        let regions = cli.path("regions")

        let plan = try await cli.run("regions", "plan", regions)
        #expect(plan.status == 0)
        #expect(plan.stdout == "+ add a\n+ add b\n+ add c\n3 to add, 0 to update, 0 to remove, 0 unchanged\n")
        let listed = try await cli.run("regions", "list", "--format", "json")
        #expect(listed.status == 3 && listed.stderr.contains("no store at"), "plan must not write, not even a store")
        #expect(!FileManager.default.fileExists(atPath: cli.database))

        let apply = try await cli.run("regions", "apply", regions)
        #expect(apply.status == 0)
        #expect(apply.stdout == plan.stdout)
        let again = try await cli.run("regions", "apply", regions)
        #expect(again.stdout == "0 to add, 0 to update, 0 to remove, 3 unchanged\n")

        let table = try await cli.run("regions", "list")
        #expect(table.stdout.hasPrefix("ID  KIND    NAME  VERSION  ENABLED  UPDATED\na   circle  stop  1        yes"))
        #expect(table.stdout.hasSuffix("3 regions\n"))
    }

    @Test func renamingAFileChangesNothingAndEditsAreUpdates() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        try cli.write("regions/a.geojson", Self.config(Self.circle("a"), Self.circle("b"), Self.circle("c")))
        #expect(try await cli.run("regions", "apply", cli.path("regions")).status == 0)

        try FileManager.default.moveItem(
            atPath: cli.path("regions/a.geojson"), toPath: cli.path("regions/renamed.geojson"))
        #expect(
            try await cli.run("regions", "plan", cli.path("regions")).stdout
                == "0 to add, 0 to update, 0 to remove, 3 unchanged\n")

        // a: geometry change; b: name only; c: removed; d: added.
        try cli.write(
            "regions/renamed.geojson",
            Self.config(
                Self.circle("a", radius: 40), Self.circle("b", name: "renamed stop"), Self.circle("d")))
        let apply = try await cli.run("regions", "apply", "--format", "json", cli.path("regions"))
        #expect(
            apply.stdout
                == #"{"add":1,"changes":[{"action":"update","fields":["radius"],"geometry_changed":true,"id":"a"},{"action":"update","fields":["name"],"geometry_changed":false,"id":"b"},{"action":"remove","id":"c"},{"action":"add","id":"d"}],"remove":1,"unchanged":0,"update":2}"#
                + "\n")
        let listed = try await cli.run("regions", "list", "--format", "json").stdout
        #expect(listed.contains(#""id":"a","kind":"circle","name":"stop","radius":40,"#))
        #expect(listed.contains(#""updated_at""#) && listed.contains(#""version":2"#))
    }

    @Test func listedGeoJSONReappliesAsANoOp() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let sample = TestData.packageRoot.appendingPathComponent("regions").path
        #expect(try await cli.run("regions", "apply", sample).status == 0)
        let exported = try await cli.run("regions", "list", "--format", "geojson")
        #expect(exported.status == 0)
        let file = try cli.write("exported.geojson", exported.stdout)
        let plan = try await cli.run("regions", "plan", file)
        #expect(plan.stdout == "0 to add, 0 to update, 0 to remove, 36 unchanged\n")
        #expect(try await cli.run("regions", "plan", sample).stdout == plan.stdout)
    }

    @Test func invalidConfigExitsOneAndLeavesTheStoreUntouched() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        try cli.write("good.geojson", Self.config(Self.circle("a")))
        #expect(try await cli.run("regions", "apply", cli.path("good.geojson")).status == 0)
        let before = try await cli.run("regions", "list", "--format", "geojson").stdout

        let bad = try cli.write(
            "bad.geojson",
            Self.config(
                Self.circle("a", radius: 99), Self.circle("b", radius: -5),
                #"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[2,2],[2,0],[0,2],[0,0]]]},"properties":{"id":"bowtie"}}"#
            ))
        let result = try await cli.run("regions", "apply", bad)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr.contains(#"bad.geojson: feature 1 (id "b"): radius must be greater than 0 metres, got -5.0"#))
        #expect(
            result.stderr.contains(
                #"bad.geojson: feature 2 (id "bowtie"): invalid geometry: Self-intersection at [1.0, 1.0]"#))
        #expect(result.stderr.contains("refused: 2 problems in the region config; nothing was applied"))
        #expect(try await cli.run("regions", "list", "--format", "geojson").stdout == before)

        let duplicate = try cli.write("dup.geojson", Self.config(Self.circle("a")))
        let clash = try await cli.run("regions", "plan", cli.path("good.geojson"), duplicate)
        #expect(clash.status == 1)
        #expect(
            clash.stderr.contains(
                #"dup.geojson: feature 0 (id "a"): duplicate id "a": also used by \#(cli.path("good.geojson")) feature 0"#
            ))

        try FileManager.default.createDirectory(atPath: cli.path("empty"), withIntermediateDirectories: true)
        let empty = try await cli.run("regions", "apply", cli.path("empty"))
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("directory has no *.geojson files"))
        #expect(try await cli.run("regions", "list", "--format", "geojson").stdout == before)

        let broken = try cli.write("broken.geojson", "{\"type\": \"FeatureCollection\",\n \"features\": [,]}")
        let syntax = try await cli.run("regions", "plan", broken)
        #expect(syntax.status == 1)
        #expect(syntax.stderr.contains("broken.geojson: invalid JSON at line 2, column 15: unexpected character ','"))
    }

    @Test func importMakesThirdPartyGeoJSONApplicable() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        let raw = try cli.write(
            "docks.geojson",
            #"""
            {"type":"FeatureCollection","features":[
            {"type":"Feature","geometry":{"type":"Point","coordinates":[-0.10997,51.52916]},"properties":{"id":1,"name":"River Street"}},
            {"type":"Feature","geometry":{"type":"Point","coordinates":[-0.19757,51.49960]},"properties":{"id":2,"name":"Phillimore Gardens"}}]}
            """#)
        #expect(try await cli.run("regions", "apply", raw).status == 1, "points without a radius are refused")
        let typo = try await cli.run(
            "regions", "import", raw, "--id-prefix", "dock:", "--radius", "40", "-o", cli.path("regoins/docks.geojson"))
        #expect(
            typo.status == 3 && typo.stderr.contains("no such directory"), "an output folder is not made on the way")
        try FileManager.default.createDirectory(atPath: cli.path("regions"), withIntermediateDirectories: true)
        let converted = try await cli.run(
            "regions", "import", raw, "--id-prefix", "dock:", "--radius", "40", "-o", cli.path("regions/docks.geojson"))
        #expect(converted.status == 0)
        #expect(
            try await cli.run("regions", "apply", cli.path("regions")).stdout
                == "+ add dock:1\n+ add dock:2\n2 to add, 0 to update, 0 to remove, 0 unchanged\n")
    }

    @Test func usageErrorsAndHelp() async throws {
        let cli = try FencepostBinary()
        defer { cli.cleanUp() }
        #expect(try await cli.run("regions", "plan").status == 64)
        let help = try await cli.run("regions", "--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("plan") && help.stdout.contains("apply") && help.stdout.contains("import"))
        let unopenable = try cli.write("file", "x")
        let store = try await cli.run("regions", "list", "--db", unopenable + "/sub/store.db")
        #expect(store.status == 3)
        #expect(store.stderr.contains("no store at"))
    }
}
