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
}
