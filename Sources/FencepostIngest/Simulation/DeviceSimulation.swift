package import FencepostCore
import FencepostGeometry

/// How a phone geofencing on its own within an OS budget would have seen traces, beside what
/// the server's monitor finds in the same fixes (`fencepost simulate-device`).
///
/// Every device's accepted fixes (the same filter and monitor as `ingest`) drive one
/// ``SimulatedPhone`` per policy. A visit the monitor finds that is shorter than the OS's
/// delay counts as too short (no phone hears of it); any other counts as found by a policy when
/// its phone delivered a stay in that region overlapping the visit (a minute of slack either
/// side: the monitor interpolates crossing times, the phone sees fixes), as missed because
/// the region was not monitored when no monitored period overlaps it, and as missed otherwise
/// (shorter than the OS's delay, or never inside the circle at a fix). Memory grows with
/// devices and visits, not fixes.
package final class DeviceSimulation {
    package struct Report: Sendable, Hashable {
        package var policy: PhonePolicy
        package var visits = 0
        /// Visits shorter than the OS's delay: no phone is told of them.
        package var tooShort = 0
        package var found = 0
        package var missedUnmonitored = 0
        package var missedOther = 0
        package var replans = 0
        /// Hours from each device's first fix to its last, summed.
        package var hours = 0.0
        /// Hours moving faster than 2 m/s between fixes (at most 10 minutes a gap), summed.
        package var movingHours = 0.0

        /// Found, of the visits long enough for the OS to report.
        package var recall: Double { visits == tooShort ? 1 : Double(found) / Double(visits - tooShort) }
        package var replansPerMovingHour: Double { movingHours > 0 ? Double(replans) / movingHours : 0 }
        package var replansPerHour: Double { hours > 0 ? Double(replans) / hours : 0 }
    }

    private let pipeline: FixPipeline
    private var outcomes: Outcomes

    package init(
        regions: [Region], roster: DeviceRoster, monitor: MonitorSettings, filter: FixFilterSettings,
        policies: [PhonePolicy], budget: Int, delay: Double
    ) throws {
        pipeline = try FixPipeline(regions: regions, roster: roster, monitor: monitor, filter: filter)
        outcomes = Outcomes(
            regions: regions, roster: roster, policies: policies, budget: budget, delay: delay)
    }

    /// Replays one input; a malformed one throws (what it gave so far still counts).
    package func simulate(_ next: () throws -> Fix?) throws {
        _ = try pipeline.input(next, into: &outcomes)
    }

    /// The figures per policy, in the order asked.
    package func finish() -> [Report] {
        outcomes.finish()
    }

    private struct Device {
        var phones: [SimulatedPhone]
        var first: Double
        var last: (time: Double, position: Position)
        var moving = 0.0
    }

    private struct ServerVisit {
        var device: String
        var region: String
        var range: ClosedRange<Double>
    }

    private struct Outcomes: FixOutcomes {
        let regions: [Region]
        let roster: DeviceRoster
        let policies: [PhonePolicy]
        let budget: Int
        let delay: Double
        var devices: [String: Device] = [:]
        var open: [String: (device: String, region: String, entered: Double)] = [:]
        var visits: [ServerVisit] = []

        init(regions: [Region], roster: DeviceRoster, policies: [PhonePolicy], budget: Int, delay: Double) {
            self.regions = regions
            self.roster = roster
            self.policies = policies
            self.budget = budget
            self.delay = delay
        }

        mutating func dropped(_ fix: Fix, reason: FixDropReason) {}

        mutating func accepted(_ fix: Fix, events: [MonitorEvent]) {
            let position = Position(lon: fix.lon, lat: fix.lat)
            if var device = devices[fix.device] {
                let gap = fix.time - device.last.time
                if gap > 0, gap <= 600, Geodesy.distance(position, device.last.position) / gap > 2 {
                    device.moving += gap
                }
                device.last = (fix.time, position)
                for index in device.phones.indices { device.phones[index].observe(position, at: fix.time) }
                devices[fix.device] = device
            } else {
                let candidates = MonitoredSetPlanner.candidates(
                    regions, device: fix.device, roster: roster, at: fix.time)
                var phones = policies.map {
                    SimulatedPhone(policy: $0, budget: budget, delay: delay, candidates: candidates)
                }
                for index in phones.indices { phones[index].observe(position, at: fix.time) }
                devices[fix.device] = Device(phones: phones, first: fix.time, last: (fix.time, position))
            }
            for event in events.map(GeofenceEvent.init) {
                switch VisitChange(for: event) {
                case .open(let visit):
                    open[visit.id] = (visit.device, visit.regionID, visit.enteredAt)
                case .close(let id, let at, _):
                    guard let visit = open.removeValue(forKey: id) else { continue }
                    visits.append(
                        ServerVisit(
                            device: visit.device, region: visit.region, range: visit.entered...max(at, visit.entered)))
                case .none:
                    break
                }
            }
        }

        mutating func finish() -> [Report] {
            for visit in open.values {
                let end = devices[visit.device]?.last.time ?? visit.entered
                visits.append(
                    ServerVisit(
                        device: visit.device, region: visit.region, range: visit.entered...max(end, visit.entered)))
            }
            open.removeAll()
            for (id, device) in devices {
                var device = device
                for index in device.phones.indices { device.phones[index].finish(at: device.last.time) }
                devices[id] = device
            }
            let slack = 60.0
            return policies.enumerated().map { index, policy in
                var report = Report(policy: policy)
                for device in devices.values {
                    report.replans += device.phones[index].replans
                    report.hours += (device.last.time - device.first) / 3_600
                    report.movingHours += device.moving / 3_600
                }
                for visit in visits {
                    guard let phone = devices[visit.device]?.phones[index] else { continue }
                    report.visits += 1
                    guard visit.range.upperBound - visit.range.lowerBound >= delay else {
                        report.tooShort += 1
                        continue
                    }
                    let window = (visit.range.lowerBound - slack)...(visit.range.upperBound + slack)
                    if phone.stays[visit.region, default: []].contains(where: { $0.overlaps(window) }) {
                        report.found += 1
                    } else if phone.monitoredPeriods[visit.region, default: []].contains(where: {
                        $0.overlaps(visit.range)
                    }) {
                        report.missedOther += 1
                    } else {
                        report.missedUnmonitored += 1
                    }
                }
                return report
            }
        }
    }
}
