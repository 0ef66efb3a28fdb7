import FencepostCore
import FencepostFormats
import FencepostTestSupport
import Foundation
import Testing

@testable import FencepostHealth

/// The export's document read to its end, as an import reads it.
private func readDocument(_ archive: [UInt8]) throws -> [UInt8] {
    let file = try TemporaryFile("", suffix: ".zip")
    defer { file.remove() }
    try Data(archive).write(to: URL(fileURLWithPath: file.path))
    return try drain(HealthExportFile(path: file.path).document())
}

private func drain(_ source: ByteSource) throws -> [UInt8] {
    var bytes: [UInt8] = []
    while let chunk = try source.read() { bytes += chunk }
    return bytes
}

/// A small export with a workout whose route is a file in the archive.
private let exportXML = Array(
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <HealthData locale="en_US">
     <Record type="HKQuantityTypeIdentifierStepCount" sourceName="iPhone" unit="count" startDate="2023-01-14 07:00:00 -0500" endDate="2023-01-14 07:10:00 -0500" value="300"/>
     <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="5" durationUnit="min" sourceName="Watch" startDate="2023-01-14 08:00:00 -0500" endDate="2023-01-14 08:05:00 -0500">
      <WorkoutRoute sourceName="Watch" startDate="2023-01-14 08:00:00 -0500" endDate="2023-01-14 08:05:00 -0500">
       <FileReference path="/workout-routes/route.gpx"/>
      </WorkoutRoute>
     </Workout>
    </HealthData>

    """.utf8)

private let routeGPX = Array(
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <gpx version="1.1" creator="test"><trk><trkseg>
    <trkpt lat="40.7306" lon="-73.9866"><time>2023-01-14T13:00:00Z</time></trkpt>
    <trkpt lat="40.7310" lon="-73.9870"><time>2023-01-14T13:01:00Z</time></trkpt>
    </trkseg></trk></gpx>

    """.utf8)

private let xmlName = "apple_health_export/export.xml"
private let routeName = "apple_health_export/workout-routes/route.gpx"

@Suite struct ZipArchiveTests {
    @Test(arguments: [false, true])
    func storedDeflatedAndZip64EntriesReadAlike(zip64: Bool) throws {
        let long = Array(String(repeating: "<!-- more than one deflate block -->\n", count: 3000).utf8)
        let archive = TestZip(
            entries: [
                .stored("apple_health_export/export_cda.xml", long), .deflated(xmlName, exportXML),
                .deflated(routeName, routeGPX), .deflated("long.txt", long),
            ], zip64: zip64
        ).bytes()
        let file = try TemporaryFile("", suffix: ".zip")
        defer { file.remove() }
        try Data(archive).write(to: URL(fileURLWithPath: file.path))

        let export = try HealthExportFile(path: file.path)
        #expect(export.documentName == "\(file.path):\(xmlName)")
        #expect(try drain(export.document()) == exportXML)
        #expect(try drain(export.referencedFile("/workout-routes/route.gpx")) == routeGPX)
        let zip = try ZipArchive(path: file.path)
        #expect(zip.entries.map(\.name) == ["apple_health_export/export_cda.xml", xmlName, routeName, "long.txt"])
        for name in ["apple_health_export/export_cda.xml", "long.txt"] {
            // Small chunks: stored blocks and chunks end at different places.
            let reader = try zip.reader(for: try #require(zip[name]), chunkSize: 1000)
            var bytes: [UInt8] = []
            while let chunk = try reader.next() {
                #expect(chunk.count <= 1000)
                bytes += chunk
            }
            #expect(bytes == long)
            #expect(try reader.next() == nil, "the end stays the end")
        }
    }

    @Test func anEmptyEntryReads() throws {
        for entry in [TestZip.Entry.stored(xmlName, []), .deflated(xmlName, [])] {
            #expect(try readDocument(TestZip(entries: [entry]).bytes()) == [])
        }
    }

    /// The seed archives of the fuzz corpus: the same export zipped by `zip` deflated (real
    /// compressed data) and stored.
    @Test func theCorpusArchivesDeflatedAndStoredReadAlike() throws {
        let corpus = TestData.packageRoot.appendingPathComponent("FuzzTesting/Corpus/health-zip")
        let exports = try ["export-deflated.zip", "export-stored.zip"].map {
            try HealthExportFile(path: corpus.appendingPathComponent($0).path)
        }
        let documents = try exports.map { try drain($0.document()) }
        #expect(documents[0] == documents[1] && documents[0].count == 2881)
        let routes = try exports.map { try drain($0.referencedFile("/workout-routes/route_2019-06-11_3.00pm.gpx")) }
        #expect(routes[0] == routes[1] && routes[0].count == 1113)
    }

    /// The real export's newer layout zipped as writers do (Python's zipfile, deflated): the
    /// same items, and the same route bytes, as read unpacked.
    @Test(.enabled(if: TestData.sharedAvailable, "needs ../shared/data beside the checkout"))
    func aRealExportZippedReadsAsUnpacked() async throws {
        let folder = TestData.sharedFile("apple_health/zip_contents/apple_health_export")
        let zip = try TemporaryFile("", suffix: ".zip")
        defer { zip.remove() }
        let script = """
            import os, sys, zipfile
            folder, out = sys.argv[1], sys.argv[2]
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
                for root, _, files in sorted(os.walk(folder)):
                    for name in sorted(files):
                        path = os.path.join(root, name)
                        z.write(path, os.path.relpath(path, os.path.dirname(folder)))
            """
        let status = try await offThePool {
            let python = Process()
            python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            python.arguments = ["python3", "-c", script, folder, zip.path]
            try python.run()
            python.waitUntilExit()
            return python.terminationStatus
        }
        try #require(status == 0)
        let zipped = try HealthExportFile(path: zip.path)
        let unpacked = try HealthExportFile(path: folder + "/export.xml")
        let items = try [zipped, unpacked].map { export in
            var reader = HealthExportReader(source: try export.document())
            var items: [HealthItem] = []
            while let item = try reader.next() { items.append(item) }
            return items
        }
        #expect(items[0] == items[1] && !items[0].isEmpty)
        let route = "/workout-routes/route_2019-06-11_3.00pm.gpx"
        #expect(try drain(zipped.referencedFile(route)) == drain(unpacked.referencedFile(route)))
    }

    /// The archive that hung `health import` for ever (its inflater read past the entry until
    /// the deflate stream ended, and this one never does): now a located error.
    @Test func theArchiveThatHungIsRefused() throws {
        let path = TestData.packageRoot.appendingPathComponent(
            "FuzzTesting/Crashes/health-zip/never-ending-deflate.zip"
        )
        .path
        let export = try HealthExportFile(path: path)
        #expect {
            try drain(export.document())
        } throws: { error in
            let failure = error as? TraceReadError
            return failure?.file == "\(path):\(xmlName)"
                && failure?.reason.contains("deflate stream does not end within its 262122 compressed bytes") == true
        }
    }

    @Test(arguments: Damage.allCases)
    func aDamagedArchiveIsALocatedError(_ damage: Damage) throws {
        let file = try TemporaryFile("", suffix: ".zip")
        defer { file.remove() }
        try Data(damage.archive).write(to: URL(fileURLWithPath: file.path))
        #expect {
            let export = try HealthExportFile(path: file.path)
            _ = try drain(export.document())
            _ = try drain(export.referencedFile("/workout-routes/route.gpx"))
        } throws: { error in
            guard let failure = error as? TraceReadError else { return false }
            let located = failure.file == (damage.entry.map { "\(file.path):\($0)" } ?? file.path)
            let explained = failure.reason.contains(damage.reason)
            if !located || !explained { Issue.record("\(damage): \(failure)") }
            return located && explained
        }
    }
}

/// Ways an archive can be damaged, each with what its error must name and say.
enum Damage: CaseIterable, CustomTestStringConvertible {
    case neverEndingStoredBlock, nonFinalBlocksOnly, truncatedInHalf, lastByteCut, wrongChecksum
    case directoryPastTheEnd, dataPastTheEnd, storedLargerThanTheFile, storedSizesDiffer, absurdCount
    case encrypted, unsupportedMethod, moreThanDeclared, endsBeforeItsSize, bytesAfterTheStream, corruptDeflate
    case noLocalHeader, zip64LocatorPastItsRecord, damagedRoute

    var testDescription: String { "\(self)" }

    /// The entry the error names, or nil for the archive itself.
    var entry: String? {
        switch self {
        case .truncatedInHalf, .lastByteCut, .directoryPastTheEnd, .absurdCount, .zip64LocatorPastItsRecord: nil
        case .damagedRoute: routeName
        default: xmlName
        }
    }

    var reason: String {
        switch self {
        case .neverEndingStoredBlock, .nonFinalBlocksOnly: "its deflate stream does not end within its"
        case .truncatedInHalf, .lastByteCut: "no end of central directory record"
        case .wrongChecksum, .damagedRoute: "CRC-32 mismatch"
        case .directoryPastTheEnd: "runs past the end of the archive"
        case .dataPastTheEnd, .storedLargerThanTheFile: "run past the end of the archive"
        case .storedSizesDiffer: "stored, yet its sizes differ"
        case .absurdCount: "claims 65535 entries in"
        case .encrypted: "encrypted zip entries are not supported"
        case .unsupportedMethod: "compression method 12 is not supported"
        case .moreThanDeclared: "holds more than the \(exportXML.count - 10) bytes declared"
        case .endsBeforeItsSize: "ends after \(exportXML.count) bytes; \(exportXML.count + 10) are declared"
        case .bytesAfterTheStream: "its deflate stream ends 3 bytes before"
        case .corruptDeflate: "corrupt deflate data: invalid block type"
        case .noLocalHeader: "no local header at byte 1"
        case .zip64LocatorPastItsRecord: "ZIP64 end record is said to be at byte"
        }
    }

    var archive: [UInt8] {
        var xml = TestZip.Entry.deflated(xmlName, exportXML)
        var route = TestZip.Entry.deflated(routeName, routeGPX)
        var zip64 = false
        var patch: (inout [UInt8]) -> Void = { _ in }
        switch self {
        case .neverEndingStoredBlock:
            // A stored block that promises 65,535 bytes and holds the document: an inflater that
            // reads on past the entry finds the file's end before the block's, and waits there.
            xml.data = [0] + le(UInt16(0xFFFF)) + le(UInt16(0)) + exportXML
            xml.compressedSize = UInt64(xml.data.count)
        case .nonFinalBlocksOnly:
            xml.data = TestZip.storedBlocks(exportXML, final: false)
            xml.compressedSize = UInt64(xml.data.count)
        case .truncatedInHalf: patch = { $0.removeLast($0.count / 2) }
        case .lastByteCut: patch = { $0.removeLast() }
        case .wrongChecksum: xml.crc32 ^= 1
        case .damagedRoute: route.crc32 ^= 0x8000_0000
        case .directoryPastTheEnd:
            patch = { bytes in
                bytes.replaceSubrange((bytes.count - 6)..<(bytes.count - 2), with: le(UInt32(bytes.count)))
            }
        case .dataPastTheEnd: xml.compressedSize = 1_000_000
        case .storedLargerThanTheFile:
            xml = .stored(xmlName, exportXML)
            xml.compressedSize = 10_000_000
            xml.uncompressedSize = 10_000_000
        case .storedSizesDiffer:
            xml = .stored(xmlName, exportXML)
            xml.uncompressedSize += 1
        case .absurdCount:
            patch = { bytes in
                bytes.replaceSubrange(
                    (bytes.count - 14)..<(bytes.count - 10), with: le(UInt16(0xFFFF)) + le(UInt16(0xFFFF)))
            }
        case .encrypted: xml.flags = 1
        case .unsupportedMethod: xml.method = 12
        case .moreThanDeclared:
            xml.uncompressedSize -= 10
        case .endsBeforeItsSize:
            xml.uncompressedSize += 10
        case .bytesAfterTheStream:
            xml.data += [0, 0, 0]
            xml.compressedSize += 3
        case .corruptDeflate:
            xml.data = [0x07] + xml.data  // BFINAL, BTYPE 11: reserved
            xml.compressedSize += 1
        case .noLocalHeader:
            // The document first: the route's local header points one byte into it.
            return TestZip(entries: [route, xml]).bytes().withLocalHeaderOffset(of: 1, set: 1)
        case .zip64LocatorPastItsRecord:
            zip64 = true
            patch = { bytes in
                // The locator's record offset, 22 + 12 bytes from the end: past the locator itself.
                let at = bytes.count - 22 - 12
                bytes.replaceSubrange(at..<(at + 8), with: le(UInt64(bytes.count)))
            }
        }
        var bytes = TestZip(entries: [xml, route], zip64: zip64).bytes()
        patch(&bytes)
        return bytes
    }
}

extension [UInt8] {
    /// Rewrites the local header offset of central directory entry `index` (no ZIP64).
    fileprivate func withLocalHeaderOffset(of index: Int, set offset: UInt32) -> [UInt8] {
        var bytes = self
        var position = Int(zipUInt32(at: count - 6))
        for _ in 0..<index {
            position +=
                46 + Int(zipUInt16(at: position + 28)) + Int(zipUInt16(at: position + 30))
                + Int(zipUInt16(at: position + 32))
        }
        bytes.replaceSubrange((position + 42)..<(position + 46), with: le(offset))
        return bytes
    }
}
