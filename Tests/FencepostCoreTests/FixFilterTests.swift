import Testing

@testable import FencepostCore

@Suite struct FixFilterTests {
    func run(_ fixes: [Fix], anchor: Double? = nil, settings: FixFilterSettings = FixFilterSettings()) -> [String] {
        var state = FilterState()
        return fixes.map {
            FixFilter.check($0, state: &state, anchorAtStart: anchor, settings: settings)?.rawValue ?? "ok"
        }
    }

    func fix(_ time: Double, _ lat: Double, _ lon: Double, accuracy: Double? = 5) -> Fix {
        Fix(device: "d", time: time, lat: lat, lon: lon, accuracy: accuracy)
    }

    @Test func dropsEachKindOfBadFixWithItsReason() {
        let results = run([
            fix(0, 52.5, 13.4),
            fix(1, .nan, 13.4),
            fix(2, 91, 13.4),
            fix(3, 0, 0),
            fix(4, 52.5, 13.4, accuracy: 500),
            fix(5, 52.5001, 13.4),
            fix(5, 52.5002, 13.4),  // same time as the previous accepted fix
            fix(4.5, 52.5, 13.4),  // older than the previous accepted fix
            fix(6, 53.5, 13.4),  // 111 km in one second
            fix(7, 52.5002, 13.4),
        ])
        #expect(
            results == [
                "ok", "invalid_coordinates", "invalid_coordinates", "null_island", "low_accuracy", "ok",
                "duplicate_time", "out_of_order", "teleport", "ok",
            ])
    }

    @Test func fixesAtOrBeforeTheAnchorAreAlreadySeen() {
        #expect(
            run([fix(10, 1, 1), fix(11, 1, 1), fix(12, 1, 1)], anchor: 11) == ["already_seen", "already_seen", "ok"])
    }

    @Test func aTeleportIsJudgedAgainstTheLastAcceptedFixOnly() {
        // 11 km in 10 s, and the next fix agrees with the jump: both are teleports from the last
        // accepted fix. Once the average speed since it drops below 90 m/s, fixes are accepted.
        let results = run([fix(0, 52.5, 13.4), fix(10, 52.6, 13.4), fix(11, 52.6001, 13.4), fix(200, 52.6002, 13.4)])
        #expect(results == ["ok", "teleport", "teleport", "ok"])
    }
}

@Suite struct DeterministicIDTests {
    @Test func nameBasedUUIDsAreStableAndWellFormed() {
        let id = DeterministicID.event(device: "bus", region: "stop", kind: .enter, time: 1_700_000_120.25)
        #expect(id == DeterministicID.event(device: "bus", region: "stop", kind: .enter, time: 1_700_000_120.2501))
        #expect(id != DeterministicID.event(device: "bus", region: "stop", kind: .exit, time: 1_700_000_120.25))
        let parts = id.split(separator: "-").map(\.count)
        #expect(parts == [8, 4, 4, 4, 12])
        #expect(id[id.index(id.startIndex, offsetBy: 14)] == "5")  // version 5
        #expect("89ab".contains(id[id.index(id.startIndex, offsetBy: 19)]))  // RFC 9562 variant
        #expect(id == id.lowercased())
    }

    @Test func matchesTheRFC9562VersionFiveTestVector() {
        // RFC 9562, appendix A.4: the DNS namespace and "www.example.com".
        let dns: [UInt8] = [
            0x6B, 0xA7, 0xB8, 0x10, 0x9D, 0xAD, 0x11, 0xD1, 0x80, 0xB4, 0x00, 0xC0, 0x4F, 0xD4, 0x30, 0xC8,
        ]
        #expect(DeterministicID.uuid(namespace: dns, name: "www.example.com") == "2ed6657d-e927-568b-95e1-2665a8aea6a2")
    }

    /// An id of parts is the version 5 UUID of the parts joined with the unit separator, in
    /// Fencepost's namespace, whatever the parts hold (none, empty ones, non-ASCII ones).
    @Test func partsAreHashedAsTheirJoinedName() {
        let cases: [[String]] = [
            [], [""], ["", ""], ["phone", "home", "enter", "1700000120.250"], ["zürich-kreis-1", "🏠", "a\u{1F}b"],
            [String(repeating: "long device name ", count: 40), "x"],
        ]
        for parts in cases {
            #expect(
                DeterministicID.uuid(parts: parts)
                    == DeterministicID.uuid(
                        namespace: DeterministicID.namespace, name: parts.joined(separator: "\u{1F}")),
                "\(parts)")
        }
    }
}
