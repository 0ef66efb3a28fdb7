import CSystemZlib

/// Decompresses a gzip stream chunk by chunk (zlib's inflate), so `.gpx.gz` and friends read
/// in flat memory like any other input.
final class GzipInflater {
    private var stream = z_stream()
    private let name: String
    private var ended = false

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
        guard !ended else { return [] }
        var output: [UInt8] = []
        var failure: String?
        var input = input
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
        return output
    }

    /// Whether the whole compressed stream was seen; a file that ends before is truncated.
    var isComplete: Bool { ended }
}
