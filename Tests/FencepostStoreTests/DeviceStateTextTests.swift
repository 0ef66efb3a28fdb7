import FencepostGeometry
import FencepostTestSupport
import Foundation
import PropertyBased
import Testing

@testable import FencepostCore
@testable import FencepostStore

/// A device's state is written by hand (`storedText`) and read back by its `Codable`
/// conformance: every state must survive the trip unchanged.
@Suite struct DeviceStateTextTests {
    static func randomState(seed: UInt64) -> DeviceState {
        var random = SplitMix64(seed: seed)
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { random.next() % 3 == 0 ? nil : value() }
        func point() -> FixPoint {
            FixPoint(
                time: 1_750_000_000 + random.unit() * 1e6, lat: random.unit() * 180 - 90,
                lon: random.unit() * 360 - 180,
                accuracy: maybe(random.unit() * 500))
        }
        func crossing() -> Crossing {
            Crossing(
                time: (random.unit() * 2e9).rounded(), flags: EventFlags(rawValue: Int(random.next() % 4)),
                position: maybe(Position(lon: random.unit() * 360 - 180, lat: -random.unit() * 90)))
        }
        // Region ids with characters JSON escapes, and ones it does not need to.
        let names = ["home", "a/b", #"quote"d"#, "back\\slash", "tab\there", "zürich-kreis-1", "🏠", "\u{1}"]
        var memberships: [String: Membership] = [:]
        for name in names where random.next() % 2 == 0 {
            memberships[name] = Membership(
                phase: random.next() % 2 == 0 ? .entering : .inside, enter: crossing(), outward: maybe(crossing()),
                armed: random.next() % 2 == 0, dwellEmitted: random.next() % 2 == 0,
                overstayEmitted: random.next() % 2 == 0, denseFrom: maybe(point()),
                insideFixes: Int(random.next() % 3))
        }
        var speeding: [String: SpeedEpisode] = [:]
        for name in memberships.keys.sorted() where random.next() % 3 == 0 {
            speeding[name] = SpeedEpisode(
                visitEnteredAt: (random.unit() * 2e9).rounded(), start: random.unit() * 2e9,
                position: Position(lon: random.unit() * 360 - 180, lat: random.unit() * 180 - 90),
                maxSpeed: random.unit() * 100)
        }
        return DeviceState(
            anchor: maybe(1_750_000_000 + random.unit() * 1e6), filter: FilterState(lastAccepted: maybe(point())),
            monitor: MonitorState(lastFix: maybe(point()), memberships: memberships, speeding: speeding))
    }

    @Test func everyStateReadsBackUnchanged() async {
        await propertyCheck(count: 300, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            let state = Self.randomState(seed: seed)
            let text = state.storedText
            #expect((try? JSONDecoder().decode(DeviceState.self, from: Data(text.utf8))) == state, "\(text)")
        }
    }

    @Test func anEmptyStateIsAnEmptyObjectWithItsParts() {
        #expect(DeviceState().storedText == #"{"filter":{},"monitor":{"memberships":{}}}"#)
    }
}
