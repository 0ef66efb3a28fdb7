import CSystemZlib

/// Decompresses a gzip stream chunk by chunk (zlib's inflate), so `.gpx.gz` and friends read
/// in flat memory like any other input.
///
/// A gzip file may hold several members one after the other (`cat a.gz b.gz > c.gz`, rotated
/// logs): each is inflated in turn, as `gzip -d` does. After the last member only zero padding
/// may follow; any other bytes are refused, not ignored.
final class GzipInflater {
    private var stream = z_stream()
    private let name: String
    /// A member ended; `trailing` holds what came after it, until it is known to be another
    /// member (its magic number) or padding.
    private var ended = false
    private var trailing: [UInt8] = []

    init(name: String) throws(TraceReadError) {
        self.name = name
        guard fp_inflate_init_auto(&stream) == Z_OK else {
            throw TraceReadError(file: name, line: nil, reason: "cannot start gzip decompression")
        }
    }

    deinit {
        inflateEnd(&stream)
    }

    /// Inflates one compressed chunk; the output may be empty while zlib needs more input.
    func inflate(_ input: [UInt8]) throws(TraceReadError) -> [UInt8] {
        var output: [UInt8] = []
        var input = input
        while true {
            if ended {
                trailing += input
                input = []
                if trailing.count >= 2, trailing[0] == 0x1F, trailing[1] == 0x8B {
                    // Another member.
                    guard inflateReset(&stream) == Z_OK else {
                        throw TraceReadError(file: name, line: nil, reason: "cannot start gzip decompression")
                    }
                    ended = false
                    swap(&input, &trailing)
                } else if trailing.count >= 2, !trailing.allSatisfy({ $0 == 0 }) {
                    throw TraceReadError(
                        file: name, line: nil, reason: "corrupt gzip data: bytes after the last member")
                } else {
                    return output  // padding so far, or too little to tell
                }
            }
            let leftover = try inflateMember(&input, into: &output)
            guard leftover > 0 else { return output }
            input = Array(input.suffix(leftover))
        }
    }

    /// Inflates `input` into `output` until it is used up or the member ends; returns how many
    /// bytes at the end of `input` were left (after the member's end).
    private func inflateMember(_ input: inout [UInt8], into output: inout [UInt8]) throws(TraceReadError) -> Int {
        var failure: String?
        input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = UInt32(source.count)
            var chunk = [UInt8](repeating: 0, count: 1 << 18)
            repeat {
                let status = chunk.withUnsafeMutableBufferPointer { target -> Int32 in
                    stream.next_out = target.baseAddress
                    stream.avail_out = UInt32(target.count)
                    return CSystemZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_OK: break
                case Z_BUF_ERROR:
                    // No progress was possible. With room to write, that is zlib asking for
                    // input: the loop ends and the next chunk, or the end of the file (truncated
                    // data), answers. Anything else would repeat the same call for ever.
                    guard stream.avail_in == 0 else {
                        failure = "corrupt gzip data: inflating makes no progress"
                        return
                    }
                case Z_STREAM_END:
                    ended = true
                    return
                default:
                    failure = "corrupt gzip data" + (stream.msg.map { ": " + String(cString: $0) } ?? "")
                    return
                }
            } while stream.avail_in > 0 || stream.avail_out == 0
        }
        if let failure { throw TraceReadError(file: name, line: nil, reason: failure) }
        return ended ? Int(stream.avail_in) : 0
    }

    /// Whether every member was seen whole (and nothing but padding after the last); a file that
    /// ends before is truncated.
    var isComplete: Bool { ended && trailing.allSatisfy { $0 == 0 } }
}
