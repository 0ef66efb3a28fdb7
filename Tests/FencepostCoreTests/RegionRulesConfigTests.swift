import FencepostCore
import FencepostGeometry
import Foundation
import Testing

/// The rules a region config can state beyond its shape: schedules and expectations.
@Suite struct RegionRulesConfigTests {
    let parser = RegionConfigParser()

    func region(_ properties: String) -> RegionFile {
        let json =
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-6.26,53.35]},"properties":{"id":"school","radius":80,\#(properties)}}]}"#
        return parser.parse(Data(json.utf8), file: "regions/school.geojson")
    }

    @Test func readsAScheduleAndWritesItBackCanonically() throws {
        let file = region(
            #""expect":"inside","speed_limit_kmh":30,"speed_min_duration":5,"schedule":{"tz":"Europe/Dublin","weekly":[{"days":["fr","MO","tu","we","th","mo"],"from":"07:00","to":"09:00"},{"days":["sa"],"from":"22:00","to":"02:30"}],"except":["2026-12-25","2026-12-24"]}"#
        )
        #expect(file.issues.isEmpty, "\(file.issues)")
        let school = try #require(file.regions.first?.region)
        let schedule = try #require(school.settings.schedule)
        #expect(school.settings.expectsInside)
        #expect(school.settings.speedLimit == 30 && school.settings.speedMinDuration == 5)
        #expect(schedule.timeZone == "Europe/Dublin")
        #expect(schedule.weekly[0].days == [.monday, .tuesday, .wednesday, .thursday, .friday])
        #expect(schedule.weekly[0].from == 420 && schedule.weekly[0].to == 540)
        #expect(schedule.weekly[1].minutes == 270, "22:00 to 02:30 the next day")
        #expect(schedule.except.map(\.description) == ["2026-12-24", "2026-12-25"])
        #expect(
            String(decoding: schedule.json.canonicalData(), as: UTF8.self)
                == #"{"except":["2026-12-24","2026-12-25"],"tz":"Europe/Dublin","weekly":[{"days":["mo","tu","we","th","fr"],"from":"07:00","to":"09:00"},{"days":["sa"],"from":"22:00","to":"02:30"}]}"#
        )
        let again = try parser.region(fromFeature: school.feature.canonicalData(), source: "canonical")
        #expect(again == school)
        #expect(school.extraProperties.isEmpty)
    }

    /// A layer is read, written back in the canonical feature the store keeps, and read again.
    @Test func readsALayerAndWritesItBack() throws {
        let file = region(#""layer":"communes""#)
        let school = try #require(file.regions.first?.region)
        #expect(school.settings.layer == "communes" && school.extraProperties.isEmpty)
        let again = try parser.region(fromFeature: school.feature.canonicalData(), source: "canonical")
        #expect(again.settings.layer == "communes" && again == school)
    }

    @Test(arguments: [
        (#""layer":"""#, "must be a non-empty name"),
        (#""layer":3"#, "must be a name, found a JSON number"),
        (#""schedule":"weekdays""#, "must be an object with tz and weekly"),
        (#""schedule":{"weekly":[{"days":["mo"],"from":"07:00","to":"09:00"}]}"#, "needs tz, an IANA time zone"),
        (#""schedule":{"tz":"Mars/Olympus","weekly":[{"days":["mo"],"from":"07:00","to":"09:00"}]}"#, "is no IANA"),
        (#""schedule":{"tz":"Europe/Dublin","weekly":[]}"#, "needs weekly"),
        (
            #""schedule":{"tz":"Europe/Dublin","weekly":[{"days":["mon"],"from":"07:00","to":"09:00"}]}"#,
            "\"mon\" is no day"
        ),
        (#""schedule":{"tz":"Europe/Dublin","weekly":[{"days":["mo"],"from":"7:00","to":"09:00"}]}"#, "weekly[0].from"),
        (#""schedule":{"tz":"Europe/Dublin","weekly":[{"days":["mo"],"from":"07:00","to":"24:30"}]}"#, "weekly[0].to"),
        (#""schedule":{"tz":"Europe/Dublin","weekly":[{"days":["mo"],"from":"07:00","to":"07:00"}]}"#, "the same time"),
        (
            #""schedule":{"tz":"Europe/Dublin","weekly":[{"days":["mo"],"from":"07:00","to":"09:00"}],"except":["2026-02-30"]}"#,
            "except must list dates"
        ),
        (
            #""schedule":{"tz":"Europe/Dublin","weekly":[{"days":["mo"],"from":"07:00","to":"09:00"}],"when":1}"#,
            "unknown member \"when\""
        ),
        (#""expect":"outside""#, "must be \"inside\""),
        (#""speed_min_duration":5"#, "needs speed_limit_kmh"),
        (#""speed_limit_kmh":3000"#, "must be at most 2000 km/h"),
        (#""speed_limit_kmh":0"#, "must be greater than 0"),
    ])
    func refusesWithTheReason(properties: String, message: String) {
        let file = region(properties)
        #expect(file.regions.isEmpty)
        #expect(file.issues.count == 1, "\(file.issues)")
        let text = file.issues.first?.description ?? ""
        #expect(text.contains("feature 0 (id \"school\")") && text.contains(message), "\(text)")
    }

    @Test func thePlanNamesAChangedSchedule() throws {
        let before = try #require(region(#""dwell":60"#).regions.first?.region)
        let after = try #require(
            region(#""dwell":60,"schedule":{"tz":"UTC","weekly":[{"days":["su"],"from":"00:00","to":"24:00"}]}"#)
                .regions.first?.region)
        var plan = RegionPlan(
            desired: [after],
            monitored: [
                MonitoredRegionDigest(
                    id: before.id, contentHash: before.contentHash, geometryHash: before.geometryHash, enabled: true)
            ])
        plan.noteChangedFields(stored: [before.id: before.feature])
        #expect(plan.lines == ["~ update school: schedule"])
    }
}
