import FencepostCore
import FencepostTestSupport
import PropertyBased
import Testing

/// The stay merge's rule on hand-made reports: one visit per stay whichever side saw it first,
/// device-only visits, a device exit closing the server's visit, and the same result for any
/// order of the same reports.
@Suite struct StayMergeTests {
    let merge = StayMerge(window: 300)

    func server(_ kind: EventKind, _ time: Double) -> StayMerge.Input {
        StayMerge.Input(eventID: "s-\(kind)-\(time)", kind: kind, time: time, fromDevice: false)
    }

    func device(_ kind: EventKind, _ time: Double) -> StayMerge.Input {
        StayMerge.Input(eventID: "d-\(kind)-\(time)", kind: kind, time: time, fromDevice: true)
    }

    /// The visits as `enter–exit reason` (`open` when open), seconds after the epoch.
    func stays(_ inputs: [StayMerge.Input]) -> [String] {
        merge.merge(inputs, device: "phone", region: "home").visits.map {
            "\(Int($0.enteredAt))–\($0.exitedAt.map { String(Int($0)) } ?? "open") \($0.exitReason?.rawValue ?? "")"
        }
    }

    @Test func theServersEventsAloneGiveTheTrackersVisits() {
        let inputs = [server(.enter, 100), server(.exit, 400), server(.enter, 450), server(.exit, 900)]
        let result = merge.merge(inputs, device: "phone", region: "home")
        #expect(stays(inputs) == ["100–400 exit", "450–900 exit"])
        #expect(
            result.visits.map(\.id) == [
                DeterministicID.visit(device: "phone", region: "home", enteredAt: 100),
                DeterministicID.visit(device: "phone", region: "home", enteredAt: 450),
            ])
    }

    @Test func aDeviceEnterWithinTheWindowOfTheServersIsTheSameEnter() {
        // The OS reports the enter 4 minutes after the crossing the fixes show.
        let inputs = [server(.enter, 100), device(.enter, 340), server(.exit, 2000)]
        let result = merge.merge(inputs, device: "phone", region: "home")
        #expect(stays(inputs) == ["100–2000 exit"])
        let visit = DeterministicID.visit(device: "phone", region: "home", enteredAt: 100)
        #expect(result.visitOfEvent["d-enter-340.0"] == .some(visit))
    }

    @Test func whicheverSideSawTheStayFirstGivesItsEnter() {
        // The device's enter comes first in time: the visit is entered then, and named by it.
        let inputs = [device(.enter, 100), server(.enter, 250), server(.exit, 2000)]
        let result = merge.merge(inputs, device: "phone", region: "home")
        #expect(stays(inputs) == ["100–2000 exit"])
        #expect(result.visits.map(\.id) == [DeterministicID.visit(device: "phone", region: "home", enteredAt: 100)])
    }

    @Test func aLateDeviceReportOfAStayTheServerOpenedAndClosedJoinsIt() {
        let inputs = [server(.enter, 100), server(.exit, 160), device(.enter, 380), device(.exit, 500)]
        #expect(stays(inputs) == ["100–160 exit"])
    }

    @Test func aDeviceEnterPastTheWindowAfterAClosedStayIsANewStay() {
        let inputs = [server(.enter, 100), server(.exit, 160), device(.enter, 401), device(.exit, 500)]
        #expect(stays(inputs) == ["100–160 exit", "401–500 exit"])
    }

    @Test func aDeviceExitClosesTheVisitTheServerOpened() {
        // The fixes still show the device inside (sparse, or in the band); the OS says it left.
        let inputs = [server(.enter, 100), device(.exit, 700)]
        let result = merge.merge(inputs, device: "phone", region: "home")
        #expect(stays(inputs) == ["100–700 exit"])
        #expect(result.visitOfEvent["d-exit-700.0"] == .some(result.visits.first?.id))
        // The server's own exit later joins the closed visit and changes nothing.
        #expect(stays(inputs + [server(.exit, 1500)]) == ["100–700 exit"])
    }

    @Test func afterItsOwnExitTheDevicesNextEnterIsANewStay() {
        let inputs = [server(.enter, 100), device(.exit, 200), device(.enter, 260), device(.exit, 900)]
        #expect(stays(inputs) == ["100–200 exit", "260–900 exit"])
    }

    @Test func reportsWithNoFixesMakeADeviceOnlyVisit() {
        #expect(stays([device(.enter, 100), device(.exit, 700)]) == ["100–700 exit"])
        #expect(stays([device(.enter, 100)]) == ["100–open "])
    }

    @Test func anExitWithNoStayBelongsToNoVisit() {
        let result = merge.merge([device(.exit, 100)], device: "phone", region: "home")
        #expect(result.visits.isEmpty)
        #expect(result.visitOfEvent["d-exit-100.0"] == .some(nil))
    }

    @Test func aClosingWithoutAnEventKeepsItsReason() {
        let removed = StayMerge.Input(eventID: nil, kind: .exit, time: 500, fromDevice: false, reason: .regionRemoved)
        #expect(stays([server(.enter, 100), removed, device(.exit, 600)]) == ["100–500 region_removed"])
    }

    @Test func aDwellBelongsToTheStayItFallsIn() {
        let dwell = StayMerge.Input(eventID: "dwell", kind: .dwell, time: 400, fromDevice: false)
        let result = merge.merge([device(.enter, 90), server(.enter, 100), dwell], device: "phone", region: "home")
        #expect(result.visitOfEvent["dwell"] == .some(result.visits.first?.id))
    }

    /// Random interleavings of a server's stays and a device's late, sometimes missing, reports:
    /// every order of the same reports gives the same visits and the same visit per event.
    @Test func theSameReportsInAnyOrderGiveTheSameVisits() async {
        await propertyCheck(count: 200, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var random = SplitMix64(seed: seed)
            var inputs: [StayMerge.Input] = []
            var time = 0.0
            for _ in 0..<(1 + Int(random.next() % 5)) {
                time += 60 + random.unit() * 900
                let enter = time
                time += 30 + random.unit() * 1200
                let exit = time
                if random.next() % 4 != 0 {
                    inputs += [server(.enter, enter), server(.exit, exit)]
                }
                if random.next() % 3 != 0 { inputs.append(device(.enter, enter + random.unit() * 400)) }
                if random.next() % 3 != 0 { inputs.append(device(.exit, exit + random.unit() * 400)) }
            }
            let expected = merge.merge(inputs, device: "phone", region: "home")
            for _ in 0..<6 {
                let shuffled = inputs.shuffled(using: &random)
                #expect(merge.merge(shuffled, device: "phone", region: "home") == expected, "seed \(seed)")
            }
            // At most one open visit, and visits in time order never overlap.
            let visits = expected.visits
            #expect(visits.dropLast().allSatisfy { !$0.isOpen }, "seed \(seed)")
            for (earlier, later) in zip(visits, visits.dropFirst()) {
                #expect(
                    (earlier.exitedAt ?? .infinity) <= later.enteredAt, "seed \(seed): \(earlier) overlaps \(later)")
            }
        }
    }
}
