import FencepostCore
import FencepostGeometry
import FencepostTestSupport
import Foundation
import Testing

/// Stops and trips from fixes alone (design, "history"): accuracy-aware, held in time, and
/// tolerant of sparse traces. Each case writes its geometry down: metres east (x) and north (y)
/// of a point in Zurich.
@Suite struct MovementTrackerTests {
    let grid = LocalGrid()
    let settings = MovementSettings()

    struct Outcome {
        var stops: [Stop] = []
        var trips: [Trip] = []
        var open: Stop?
    }

    func run(_ fixes: [Fix], settings: MovementSettings? = nil) -> Outcome {
        var tracker = MovementTracker(device: "phone")
        var outcome = Outcome()
        for fix in fixes {
            for change in tracker.add(FixPoint(fix), settings: settings ?? self.settings) {
                switch change {
                case .stopClosed(let stop): outcome.stops.append(stop)
                case .trip(let trip): outcome.trips.append(trip)
                case .stopOpened: break
                }
            }
        }
        outcome.open = tracker.openStop
        return outcome
    }

    /// A day at home with a fix every 15 minutes, Wi-Fi positions scattered up to 60 m with a
    /// reported accuracy of 40 m, and one fix 250 m off reporting 150 m: one stop, all day.
    @Test func aDayAtHomeWithAFixEveryFifteenMinutesIsOneStop() {
        var random = SplitMix64(seed: 15)
        var fixes: [Fix] = []
        for k in 0..<96 {
            let angle = random.unit() * 2 * .pi
            let offset = random.unit() * 60
            fixes.append(grid.fix(cos(angle) * offset, sin(angle) * offset, t: Double(k) * 900, accuracy: 40))
        }
        fixes[50] = grid.fix(250, 0, t: 50 * 900, accuracy: 150)
        let outcome = run(fixes)
        #expect(outcome.stops.isEmpty, "no departure: \(outcome.stops)")
        #expect(outcome.trips.isEmpty)
        let stop = try! #require(outcome.open)
        #expect(stop.start == 0)
        #expect(stop.end == 95 * 900)
        #expect(Geodesy.distance(stop.position, grid.origin) < 30, "the centre is home: \(stop)")
    }

    /// Home for 10 minutes at 1 Hz, then a drive east at 15 m/s for 5 km with a 90 s red light
    /// halfway, then the office: two stops (home closed, the office open) and one trip whose
    /// distance and speeds are the drive's; the red light is no stop.
    @Test func aDriveBetweenTwoStopsIsOneTrip() {
        var fixes: [Fix] = []
        var t = 0.0
        var random = SplitMix64(seed: 3)
        func jitter() -> Double { (random.unit() - 0.5) * 8 }
        for _ in 0..<600 {
            fixes.append(grid.fix(jitter(), jitter(), t: t, accuracy: 5))
            t += 1
        }
        var x = 0.0
        while x < 5000 {
            if abs(x - 2500) < 7.5 {
                for _ in 0..<90 {
                    fixes.append(grid.fix(x + jitter(), jitter(), t: t, accuracy: 5))
                    t += 1
                }
            }
            x += 15
            fixes.append(grid.fix(x + jitter(), jitter(), t: t, accuracy: 5))
            t += 1
        }
        let arrival = t - 1
        for _ in 0..<1800 {
            fixes.append(grid.fix(5000 + jitter(), jitter(), t: t, accuracy: 5))
            t += 1
        }
        let outcome = run(fixes)
        #expect(outcome.stops.count == 1, "home only: \(outcome.stops)")
        #expect(outcome.trips.count == 1, "\(outcome.trips)")
        let home = try! #require(outcome.stops.first)
        let office = try! #require(outcome.open)
        let trip = try! #require(outcome.trips.first)
        #expect(home.start == 0)
        #expect(abs(home.end - 599) < 15, "home left at the drive's start: \(home)")
        #expect(abs(office.start - arrival) < 15, "office reached at the arrival: \(office) vs \(arrival)")
        #expect(trip.fromStop?.id == home.id)
        #expect(trip.toStop?.id == office.id)
        #expect(
            abs(trip.distance - 5000) <= 2 * settings.core + 10, "from near home to near the office: \(trip.distance)")
        #expect(abs(trip.maxSpeed - 15) < 2, "max speed \(trip.maxSpeed) m/s")
        #expect(trip.meanSpeed < trip.maxSpeed)
    }

    /// At a stop sampled every second, one fix 300 m off (reporting 3 m): the stop goes on, and
    /// the spike is no departure.
    @Test func oneStrayFixDoesNotEndAStop() {
        var fixes = (0..<900).map { grid.fix(0, 0, t: Double($0), accuracy: 5) }
        fixes[400] = grid.fix(300, 0, t: 400, accuracy: 3)
        let outcome = run(fixes)
        #expect(outcome.stops.isEmpty)
        #expect(outcome.trips.isEmpty)
        #expect(outcome.open?.start == 0)
        #expect(outcome.open?.end == 899)
    }

    /// A spike during a drive is left out of its distance: 2 km at 10 m/s with one fix 400 m
    /// north of the road. A trip runs from the last fix near one stop's centre to the first near
    /// the next one's (``MovementSettings/core``).
    @Test func aSpikeAddsNoDistance() {
        var fixes = (0..<300).map { grid.fix(0, 0, t: Double($0), accuracy: 5) }
        for k in 1...200 { fixes.append(grid.fix(Double(k) * 10, 0, t: 299 + Double(k), accuracy: 5)) }
        fixes[400] = grid.fix(1000, 400, t: fixes[400].time, accuracy: 5)
        for k in 1...600 { fixes.append(grid.fix(2000, 0, t: 499 + Double(k), accuracy: 5)) }
        let trip = try! #require(run(fixes).trips.first)
        #expect(abs(trip.distance - 2000) <= 2 * settings.core + 20, "distance \(trip.distance)")
        #expect(trip.maxSpeed < 12, "max speed \(trip.maxSpeed)")
    }

    /// Silence for two days at the same place is still one stop; silence past the gap in the
    /// middle of a drive ends the trip at the last fix before it.
    @Test func silenceAtAPlaceKeepsTheStopAndSilenceOnTheWayEndsTheTrip() {
        let atHome = [0.0, 600, 2 * 86400, 2 * 86400 + 600].map { grid.fix(0, 0, t: $0, accuracy: 20) }
        let home = run(atHome)
        #expect(home.stops.isEmpty)
        #expect(home.open?.start == 0)
        #expect(home.open?.end == Double(2 * 86400 + 600))

        var fixes = (0..<600).map { grid.fix(0, 0, t: Double($0), accuracy: 5) }
        for k in 1...100 { fixes.append(grid.fix(Double(k) * 10, 0, t: 599 + Double(k), accuracy: 5)) }
        let silent = 699 + settings.maxGap + 1
        for k in 0..<100 { fixes.append(grid.fix(50_000 + Double(k) * 10, 0, t: silent + Double(k), accuracy: 5)) }
        let outcome = run(fixes)
        #expect(outcome.stops.count == 1)
        let trip = try! #require(outcome.trips.first)
        #expect(trip.toStop == nil)
        #expect(trip.end == 699, "the trip ends at the last fix before the silence: \(trip)")
        #expect(abs(trip.distance - 1000) <= settings.core + 20, "from the last fix near home: \(trip.distance)")
    }

    /// Two fixes hours apart and 150 m from each other, away from the place before them: the
    /// device stayed (a sparse trace's stay), though the second fix is no longer at the first
    /// place's centre.
    @Test func twoCloseFixesHoursApartAreAStay() {
        let fixes = [
            grid.fix(0, 0, t: 0, accuracy: nil), grid.fix(0, 150, t: 180, accuracy: nil),
            grid.fix(0, 320, t: 600, accuracy: nil), grid.fix(0, 450, t: 5 * 3600, accuracy: nil),
            grid.fix(5000, 450, t: 5 * 3600 + 600, accuracy: nil),
            grid.fix(9000, 450, t: 5 * 3600 + 1200, accuracy: nil),
        ]
        let outcome = run(fixes)
        let last = try! #require(outcome.stops.last)
        #expect(last.start == 600, "\(outcome.stops)")
        #expect(last.end == 5 * 3600)
    }

    /// The tracker's state is a value that survives encoding: a run stopped anywhere and resumed
    /// from its decoded state finds what one uninterrupted run finds (an open stop persists as
    /// an open visit does).
    @Test(arguments: [200, 650, 1200, 2500])
    func resumingFromTheEncodedStateChangesNothing(splitAt split: Int) throws {
        var fixes = (0..<700).map { grid.fix(0, 0, t: Double($0), accuracy: 5) }
        for k in 1...300 { fixes.append(grid.fix(Double(k) * 12, 0, t: 699 + Double(k), accuracy: 5)) }
        for k in 1...1500 { fixes.append(grid.fix(3600, 0, t: 999 + Double(k), accuracy: 5)) }
        for k in 1...100 { fixes.append(grid.fix(3600 - Double(k) * 12, 0, t: 2499 + Double(k), accuracy: 5)) }
        var whole = MovementTracker(device: "phone")
        var wholeChanges: [MovementTracker.Change] = []
        for fix in fixes { wholeChanges += whole.add(FixPoint(fix), settings: settings) }

        var first = MovementTracker(device: "phone")
        var changes: [MovementTracker.Change] = []
        for fix in fixes[..<split] { changes += first.add(FixPoint(fix), settings: settings) }
        var resumed = try JSONDecoder().decode(MovementTracker.self, from: JSONEncoder().encode(first))
        for fix in fixes[split...] { changes += resumed.add(FixPoint(fix), settings: settings) }
        #expect(changes == wholeChanges)
        #expect(resumed == whole)
        #expect(wholeChanges.count == 5, "home opened and closed, the trip, the second place opened and closed")
    }

    /// Fixes worse than the accuracy limit are ignored and counted; a fix not later than the
    /// last one is ignored.
    @Test func inaccurateAndRepeatedFixesAreIgnored() {
        var tracker = MovementTracker(device: "phone")
        _ = tracker.add(FixPoint(grid.fix(0, 0, t: 0, accuracy: 5)), settings: settings)
        _ = tracker.add(FixPoint(grid.fix(9000, 0, t: 10, accuracy: 2000)), settings: settings)
        _ = tracker.add(FixPoint(grid.fix(0, 0, t: 0, accuracy: 5)), settings: settings)
        _ = tracker.add(FixPoint(grid.fix(0, 0, t: 400, accuracy: 5)), settings: settings)
        #expect(tracker.inaccurate == 1)
        #expect(tracker.openStop?.fixes == 2)
    }
}

extension Stop {
    fileprivate var position: Position { Position(lon: lon, lat: lat) }
}
