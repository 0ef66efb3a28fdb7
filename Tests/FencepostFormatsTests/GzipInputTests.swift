import FencepostCore
import FencepostFormats
import FencepostTestSupport
import Foundation
import Testing

/// A gzip input that ends before its stream does, or whose deflate stream never ends, is a
/// clear error when the file runs out: nothing waits for more.
@Suite struct GzipInputTests {
    /// A gzip header: deflate, no name, no time, unknown OS.
    static let header: [UInt8] = [0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 0xFF]
    static let csv = Array("time,lat,lon\n2020-01-01T00:00:00Z,1.5,2.5\n".utf8)

    /// A deflate stored block (type 00) holding `bytes`, final or not.
    static func storedBlock(_ bytes: [UInt8], final: Bool, length: UInt16? = nil) -> [UInt8] {
        let length = length ?? UInt16(bytes.count)
        return [final ? 1 : 0, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
            + bytes
    }

    enum Damage: CaseIterable, CustomTestStringConvertible {
        case headerOnly, neverFinalBlock, blockLongerThanTheFile, trailerCut, wrongChecksum

        var testDescription: String { "\(self)" }

        var bytes: [UInt8] {
            switch self {
            case .headerOnly: header
            case .neverFinalBlock: header + storedBlock(csv, final: false)
            case .blockLongerThanTheFile: header + storedBlock(csv, final: true, length: 0xFFFF)
            case .trailerCut: header + storedBlock(csv, final: true) + [1, 2]
            case .wrongChecksum:
                header + storedBlock(csv, final: true) + [0, 0, 0, 0] + [UInt8(csv.count), 0, 0, 0]
            }
        }

        var reason: String {
            self == .wrongChecksum ? "corrupt gzip data: incorrect data check" : "truncated gzip data"
        }
    }

    @Test(arguments: Damage.allCases)
    func aDamagedGzipInputIsAnError(_ damage: Damage) throws {
        let file = try TemporaryFile("", suffix: ".csv.gz")
        defer { file.remove() }
        try Data(damage.bytes).write(to: URL(fileURLWithPath: file.path))
        #expect {
            var reader = try TraceOpener.open(file.path, format: .csv, device: "d")
            while try reader.next() != nil {}
        } throws: { error in
            let failure = error as? TraceReadError
            return failure?.file == file.path && failure?.reason.contains(damage.reason) == true
        }
    }

    /// Gzip members written by Python's gzip module (an independent writer), concatenated.
    static func members(_ parts: [String], then tail: [UInt8] = []) throws -> [UInt8] {
        let out = try TemporaryFile("", suffix: ".gz")
        defer { out.remove() }
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments =
            [
                "python3", "-c",
                "import gzip, sys\nopen(sys.argv[1], 'wb').write(b''.join(gzip.compress(p.encode()) for p in sys.argv[2:]))",
                out.path,
            ] + parts
        try python.run()
        python.waitUntilExit()
        #expect(python.terminationStatus == 0)
        return Array(try Data(contentsOf: URL(fileURLWithPath: out.path))) + tail
    }

    static func readAll(_ bytes: [UInt8]) throws -> [Fix] {
        let file = try TemporaryFile("", suffix: ".csv.gz")
        defer { file.remove() }
        try Data(bytes).write(to: URL(fileURLWithPath: file.path))
        var reader = try TraceOpener.open(file.path, format: .csv, device: "d")
        var fixes: [Fix] = []
        while let fix = try reader.next() { fixes.append(fix) }
        return fixes
    }

    @Test func everyMemberOfAConcatenatedGzipIsRead() throws {
        // `cat a.gz b.gz > c.gz`: the second member's fixes are not dropped.
        let first = "time,lat,lon\n2020-01-01T00:00:00Z,1.5,2.5\n"
        let second = "2020-01-01T00:01:00Z,1.6,2.6\n2020-01-01T00:02:00Z,1.7,2.7\n"
        let fixes = try Self.readAll(try Self.members([first, second]))
        #expect(fixes.map(\.lat) == [1.5, 1.6, 1.7])
        // Zero padding after the last member (as some tools write) is fine.
        #expect(try Self.readAll(try Self.members([first, second], then: [0, 0, 0, 0])).count == 3)
    }

    @Test func bytesAfterTheLastMemberAreRefused() throws {
        let bytes = try Self.members(["time,lat,lon\n2020-01-01T00:00:00Z,1.5,2.5\n"], then: Array("junk".utf8))
        #expect {
            _ = try Self.readAll(bytes)
        } throws: { error in
            (error as? TraceReadError)?.reason.contains("bytes after the last member") == true
        }
        // A second member cut short is truncated data.
        let cut = try Self.members(["time,lat,lon\n2020-01-01T00:00:00Z,1.5,2.5\n", "2020-01-01T00:01:00Z,1.6,2.6\n"])
        #expect {
            _ = try Self.readAll(Array(cut.dropLast(6)))
        } throws: { error in
            (error as? TraceReadError)?.reason.contains("truncated gzip data") == true
        }
    }
}
