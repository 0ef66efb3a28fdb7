import FencepostCore
import FencepostFormats
import FencepostTestSupport
import Foundation
import Testing

/// Garmin FIT files: small files written message by message with ``FITBuilder`` for each rule
/// of the format, then the real files of ../shared/data against the figures of its MANIFEST.
@Suite struct FITTraceReaderTests {
    /// 2021-06-01T00:00:00Z in FIT time (seconds since 1989-12-31T00:00:00Z, Unix 631065600):
    /// 1622505600 − 631065600.
    static let start: Int64 = 991_440_000
    static let unixStart = 1_622_505_600.0

    func readAll(_ bytes: [UInt8], format: TraceFormat? = nil, name: String = "ride.fit") throws -> (
        fixes: [Fix], skipped: [String: Int]
    ) {
        var reader = try TraceOpener.open(ByteSource(name: name, bytes: bytes), format: format, device: nil)
        var fixes: [Fix] = []
        while let fix = try reader.next() { fixes.append(fix) }
        return (fixes, reader.skipped)
    }

    /// The error reading `bytes` throws.
    func refusal(_ bytes: [UInt8]) -> TraceReadError? {
        do {
            _ = try readAll(bytes)
            return nil
        } catch {
            return error as? TraceReadError
        }
    }

    /// Three records a second apart, the middle one without a position.
    func threeRecords(bigEndian: Bool = false) -> FITBuilder {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: FITBuilder.recordFields, bigEndian: bigEndian)
        builder.record(time: Self.start, lat: 47.3769, lon: 8.5417, altitude: 408.2, speed: 1.25)
        builder.data(
            local: 0,
            [(Self.start + 1, 4), (FITBuilder.noPosition, 4), (FITBuilder.noPosition, 4), (0xFFFF, 2), (0, 2)])
        builder.record(time: Self.start + 2, lat: -33.8568, lon: -151.2153)
        return builder
    }

    @Test func recordsWithTimePositionAltitudeAndSpeed() throws {
        let (fixes, skipped) = try readAll(threeRecords().file())
        #expect(skipped == ["no_position": 1])
        #expect(fixes.map(\.time) == [Self.unixStart, Self.unixStart + 2])
        #expect(fixes.allSatisfy { $0.device == "ride" })
        // Semicircles round to within 180/2^31 degrees (1 cm).
        #expect(abs(fixes[0].lat - 47.3769) < 1e-7 && abs(fixes[0].lon - 8.5417) < 1e-7)
        #expect(abs(fixes[1].lat + 33.8568) < 1e-7 && abs(fixes[1].lon + 151.2153) < 1e-7)
        // Altitude: raw (408.2 + 500) × 5 = 4541 → 4541 / 5 − 500; speed: raw 1250 mm/s.
        #expect(abs(fixes[0].altitude! - 408.2) < 1e-9)
        #expect(fixes[0].speed == 1.25)
        #expect(fixes[0].accuracy == nil)
    }

    @Test func aTwelveByteHeaderWithoutCRC() throws {
        #expect(try readAll(threeRecords().file(headerSize: 12)).fixes.count == 2)
    }

    @Test func bigEndianDefinitionsReadTheSame() throws {
        let little = try readAll(threeRecords().file()).fixes
        let big = try readAll(threeRecords(bigEndian: true).file()).fixes
        #expect(big == little)
    }

    @Test func compressedTimestampHeadersCountFromTheLastFullTimestamp() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: FITBuilder.recordFields)
        // A compressed record before any full timestamp has no time: skipped.
        let position = [(FITBuilder.semicircles(1), 4), (FITBuilder.semicircles(2), 4), (2600, 2), (0, 2)]
        builder.define(local: 1, global: 20, fields: Array(FITBuilder.recordFields.dropFirst()))
        builder.compressed(local: 1, seconds: 3, position)
        // A full timestamp whose low 5 bits are 30 (start + 30: 991440030 = 30982500 × 32 + 30).
        builder.record(time: Self.start + 30, lat: 1, lon: 2)
        builder.compressed(local: 1, seconds: 31, position)  // 30 → 31: one second on
        builder.compressed(local: 1, seconds: 2, position)  // 31 → 2: rolled over, 3 seconds on
        builder.compressed(local: 1, seconds: 2, position)  // the same second again
        let (fixes, skipped) = try readAll(builder.file())
        #expect(skipped == ["missing_or_bad_time": 1])
        #expect(fixes.map { $0.time - Self.unixStart } == [30, 31, 34, 34])
        #expect(fixes[1].altitude == 20)
    }

    @Test func otherMessagesTimestampsAlsoAnchorCompressedHeaders() throws {
        var builder = FITBuilder()
        // An event message (global 21) with a timestamp, then a compressed record 5 s later.
        builder.define(local: 0, global: 21, fields: [.init(number: 253, size: 4, baseType: 0x86)])
        builder.data(local: 0, [(Self.start, 4)])
        builder.define(local: 1, global: 20, fields: Array(FITBuilder.recordFields.dropFirst(1).prefix(2)))
        builder.compressed(local: 1, seconds: 5, [(FITBuilder.semicircles(1), 4), (FITBuilder.semicircles(2), 4)])
        let fixes = try readAll(builder.file()).fixes
        #expect(fixes.map(\.time) == [Self.unixStart + 5])
        #expect(fixes[0].altitude == nil && fixes[0].speed == nil)
    }

    @Test func enhancedFieldsDeveloperFieldsAndGPSAccuracy() throws {
        var builder = FITBuilder()
        let fields: [FITBuilder.Field] = [
            .init(number: 253, size: 4, baseType: 0x86), .init(number: 0, size: 4, baseType: 0x85),
            .init(number: 1, size: 4, baseType: 0x85), .init(number: 78, size: 4, baseType: 0x86),
            .init(number: 73, size: 4, baseType: 0x86), .init(number: 31, size: 1, baseType: 0x02),
        ]
        builder.define(local: 5, global: 20, fields: fields, developerSizes: [3, 1])
        // enhanced_altitude (8848 + 500) × 5 = 46740; enhanced_speed 70 000 mm/s; accuracy 4 m;
        // then 4 bytes of developer fields, which are skipped.
        builder.data(
            local: 5,
            [
                (Self.start, 4), (FITBuilder.semicircles(27.988), 4), (FITBuilder.semicircles(86.925), 4),
                (46740, 4), (70000, 4), (4, 1),
            ], raw: [9, 9, 9, 9])
        builder.data(
            local: 5,
            [
                (Self.start + 1, 4), (FITBuilder.semicircles(27.988), 4), (FITBuilder.semicircles(86.925), 4),
                (0xFFFF_FFFF, 4), (0xFFFF_FFFF, 4), (0xFF, 1),
            ], raw: [9, 9, 9, 9])
        let fixes = try readAll(builder.file()).fixes
        #expect(fixes.count == 2)
        #expect(fixes[0].altitude == 8848 && fixes[0].speed == 70 && fixes[0].accuracy == 4)
        #expect(fixes[1].altitude == nil && fixes[1].speed == nil && fixes[1].accuracy == nil)
    }

    @Test func badRecordsAreSkippedAndCounted() throws {
        var builder = FITBuilder()
        builder.define(local: 0, global: 20, fields: FITBuilder.recordFields)
        // Time in seconds since power-on (below 0x10000000), not a date.
        builder.record(time: 1000, lat: 1, lon: 2)
        // Latitude beyond the pole (100°).
        builder.record(time: Self.start, lat: 100, lon: 2)
        // position_lat written in 2 bytes: not a sint32, so not read.
        builder.define(
            local: 1, global: 20,
            fields: [
                .init(number: 253, size: 4, baseType: 0x86), .init(number: 0, size: 2, baseType: 0x83),
                .init(number: 1, size: 4, baseType: 0x85),
            ])
        builder.data(local: 1, [(Self.start + 1, 4), (7, 2), (FITBuilder.semicircles(2), 4)])
        builder.record(time: Self.start + 2, lat: 1, lon: 2)
        let (fixes, skipped) = try readAll(builder.file())
        #expect(fixes.count == 1)
        #expect(skipped == ["missing_or_bad_time": 1, "missing_or_bad_coordinates": 1, "bad_field_size": 1])
    }

    @Test func chainedFilesAreReadInTurn() throws {
        var second = FITBuilder()
        second.define(local: 0, global: 20, fields: FITBuilder.recordFields)
        second.record(time: Self.start + 60, lat: 1, lon: 2)
        let fixes = try readAll(threeRecords().file() + second.file(headerSize: 12)).fixes
        #expect(fixes.map { $0.time - Self.unixStart } == [0, 2, 60])
    }

    // MARK: - Refusals

    @Test func aDataMessageOfAnUndefinedLocalTypeIsRefusedWhereItIs() {
        var builder = threeRecords()
        builder.data(local: 3, [(0, 4)])
        let error = refusal(builder.file())
        // 14 header bytes, the definition (1 + 5 + 5 × 3 = 21), three records of 1 + 16.
        #expect(error?.file == "ride.fit")
        #expect(
            error?.reason == "FIT byte 86: a data message of local type 3, which no definition precedes")
    }

    @Test func aFileCutShortIsRefused() {
        let file = threeRecords().file()
        let error = refusal(Array(file.prefix(file.count - 10)))
        #expect(error?.reason.hasPrefix("FIT byte 69: the file ends inside this message") == true)
        // Cut inside the header, or right before the CRC.
        #expect(refusal(Array(file.prefix(13)))?.reason.contains("ends inside the header") == true)
        #expect(refusal(Array(file.prefix(file.count - 2)))?.reason == "FIT byte 86: the file ends before its CRC")
    }

    @Test func aDataSizeBeyondTheFileIsRefused() {
        let builder = threeRecords()
        // The CRC's two bytes read as a message: a data message of a local type not defined.
        #expect(refusal(builder.file(dataSize: 1_000_000))?.reason.hasPrefix("FIT byte 86: a data message") == true)
        // Without them, the file ends where the header promises more.
        let error = refusal(Array(builder.file(dataSize: 1_000_000).prefix(86)))
        #expect(
            error?.reason
                == "FIT byte 86: the file ends here, before the end of the records its header gives (byte 1000014): "
                + "cut short, or still being written")
    }

    @Test func aMessageRunningPastTheRecordsIsRefused() {
        let builder = threeRecords()
        let error = refusal(builder.file(dataSize: builder.records.count - 3))
        #expect(error?.reason == "FIT byte 69: a message of 17 bytes runs past the end of the records (byte 83)")
    }

    @Test func aCRCMismatchRefusesTheFile() {
        var file = threeRecords().file()
        // One bit of the first record's latitude (header 14 + definition 21 + record header 1
        // + timestamp 4 = byte 40).
        file[40] ^= 0x01
        #expect(
            refusal(file)?.reason.hasPrefix("FIT byte 86: file CRC mismatch (stored 0x") == true)
        var header = threeRecords().file()
        header[1] = 0x20  // the protocol version, under the header's CRC
        #expect(refusal(header)?.reason.hasPrefix("FIT header at byte 0: CRC mismatch") == true)
    }

    @Test func anArchitectureOtherThanLittleOrBigEndianIsRefused() {
        var file = threeRecords().file()
        file[16] = 7
        #expect(refusal(file)?.reason.hasPrefix("FIT byte 14: architecture 7") == true)
    }

    @Test func everyPrefixAndEveryFlippedByteIsReadOrRefusedWithoutCrashing() {
        var builder = threeRecords()
        builder.compressed(local: 0, seconds: 9, [(0, 4), (0, 4), (0, 4), (0, 2), (0, 2)])
        let file = builder.file()
        for length in 0..<file.count { _ = refusal(Array(file.prefix(length))) }
        for index in file.indices {
            var flipped = file
            flipped[index] ^= 0xFF
            _ = try? readAll(flipped, format: .fit)
        }
    }

    // MARK: - Real files

    /// Fixes per file against ../shared/data/MANIFEST.md (`pts`, first and last time), and the
    /// first fix's position against the corner of the MANIFEST's bbox it must lie within.
    @Test(
        .enabled(if: TestData.sharedAvailable, "needs ../shared/data beside the checkout"),
        arguments: [
            ("toronto/garmin-edge-500-activity.fit", 10677, "2011-09-25T13:00", "2011-09-25T16:31"),
            ("toronto/sample-activity.fit", 2965, "2011-06-26T21:25", "2011-06-27T00:34"),
            ("london/null_compressed_speed_dist.fit", 1808, "2017-10-05T00:04", "2017-10-05T00:34"),
            ("formats/Edge810-Vector-2013-08-16-15-35-10.fit", 4700, "2013-08-16", "2013-08-16"),
            ("formats/activity-small-fenix2-run.fit", 2809, "2015-08-15", "2015-08-15"),
            ("formats/2013-02-06-12-11-14.fit", 583, "2013-02-06", "2013-02-06"),
            ("formats/garmin-fenix-5-run.fit", 21, "2017-06-11", "2017-06-11"),
        ])
    func realFiles(path: String, count: Int, first: String, last: String) throws {
        var reader = try TraceOpener.open(TestData.sharedFile(path), format: nil, device: nil)
        var fixes: [Fix] = []
        while let fix = try reader.next() { fixes.append(fix) }
        #expect(fixes.count == count)
        let times = fixes.map(\.time)
        #expect(Timestamp.format(Date(timeIntervalSince1970: times.min() ?? 0)).hasPrefix(first))
        #expect(Timestamp.format(Date(timeIntervalSince1970: times.max() ?? 0)).hasPrefix(last))
        #expect(fixes.allSatisfy { abs($0.lat) <= 90 && abs($0.lon) <= 180 })
    }

    /// The MANIFEST's bbox (minlon, minlat, maxlon, maxlat, written to 0.001°) holds every fix.
    @Test(
        .enabled(if: TestData.sharedAvailable, "needs ../shared/data beside the checkout"),
        arguments: [
            ("toronto/garmin-edge-500-activity.fit", [-79.533, 43.674, -79.339, 43.973]),
            ("toronto/sample-activity.fit", [-79.659, 43.452, -79.402, 43.697]),
            ("london/null_compressed_speed_dist.fit", [-0.164, 51.485, -0.078, 51.511]),
        ])
    func realFilesStayInTheirBoundingBoxes(path: String, bbox: [Double]) throws {
        var reader = try TraceOpener.open(TestData.sharedFile(path), format: nil, device: nil)
        var lons: [Double] = []
        var lats: [Double] = []
        while let fix = try reader.next() {
            lons.append(fix.lon)
            lats.append(fix.lat)
        }
        let found = [lons.min()!, lats.min()!, lons.max()!, lats.max()!]
        for (value, expected) in zip(found, bbox) { #expect(abs(value - expected) < 0.0006, "\(path): \(found)") }
    }

    /// The first record with a position in garmin-fenix-5-run.fit, decoded by hand from its
    /// bytes: at byte 2032 the header 0x0D (a data message of local type 13, whose definition
    /// gives timestamp, position_lat, position_long, distance, altitude, speed… little-endian),
    /// then `e108a033 38852f1b 2b37cba8 00000000 cf09 0000`:
    /// - timestamp 0x33A008E1 = 866126049 s; + 631065600 = 1497191649 = 2017-06-11T14:34:09Z;
    /// - position_lat 0x1B2F8538 = 456099128 semicircles × 180 / 2³¹ = 38.229787275°;
    /// - position_long 0xA8CB372B = 2831890219 − 2³² = −1463077077 × 180 / 2³¹ = −122.633703919°
    ///   (Sonoma, California, as the MANIFEST says);
    /// - altitude 0x09CF = 2511 / 5 − 500 = 2.2 m; speed 0 m/s.
    @Test(.enabled(if: TestData.sharedAvailable, "needs ../shared/data beside the checkout"))
    func aRecordDecodedByHand() throws {
        var reader = try TraceOpener.open(
            TestData.sharedFile("formats/garmin-fenix-5-run.fit"), format: nil, device: nil)
        let fix = try #require(try reader.next())
        #expect(fix.device == "garmin-fenix-5-run")
        #expect(fix.time == 1_497_191_649)
        #expect(abs(fix.lat - 38.229787275) < 1e-9 && abs(fix.lon + 122.633703919) < 1e-9)
        #expect(abs(fix.altitude! - 2.2) < 1e-9 && fix.speed == 0)
    }

    @Test(.enabled(if: TestData.sharedAvailable, "needs ../shared/data beside the checkout"))
    func theCorruptHeaderFileIsRefused() throws {
        // Its first file (771 bytes) is whole and its CRC right; the 83 bytes after it carry a
        // chained header whose signature reads ".GIT".
        let path = TestData.sharedFile("formats/activity-settings-corruptheader.fit")
        #expect {
            var reader = try TraceOpener.open(path, format: nil, device: nil)
            while try reader.next() != nil {}
        } throws: { error in
            (error as? TraceReadError)?.reason
                == "FIT header at byte 771: bytes after the file's CRC that are not another FIT file "
                + "(\".GIT\" where a header has \".FIT\"): a wrong data size in the header, or something appended"
        }
    }
}
