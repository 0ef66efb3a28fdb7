import CSystemZlib
import FencepostFormats

/// zlib's inflate over raw deflate data (no zlib or gzip header: window bits -15), as zip
/// entries hold it. It keeps the compressed chunk it was fed until zlib has taken all of it, so
/// the caller can take the output a bounded piece at a time; zlib's pointers are set for each
/// call and cleared after it, so none outlives the buffer it points into.
final class RawInflater {
    /// What one call did.
    struct Step {
        /// Compressed bytes taken.
        var consumed: Int
        /// Bytes written to the output.
        var produced: Int
        /// The deflate stream's final block is complete.
        var ended: Bool
    }

    private var stream = z_stream()
    private var input: [UInt8] = []
    private var consumed = 0
    private let name: String

    init(name: String) throws(TraceReadError) {
        self.name = name
        guard fp_inflate_init_raw(&stream) == Z_OK else {
            throw TraceReadError(file: name, line: nil, reason: "cannot start inflating (zlib)")
        }
    }

    deinit {
        inflateEnd(&stream)
    }

    /// Compressed bytes fed and not yet taken by zlib.
    var pendingInput: Int { input.count - consumed }

    func feed(_ bytes: [UInt8]) {
        precondition(pendingInput == 0, "fed before the last input was taken")
        input = bytes
        consumed = 0
    }

    /// Inflates what it can of the pending input into `output` from `offset` to its end.
    func inflate(into output: inout [UInt8], at offset: Int) throws(TraceReadError) -> Step {
        precondition(offset < output.count, "no room to inflate into")
        let inputBefore = pendingInput
        let room = output.count - offset
        let status = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = source.baseAddress.map { $0 + consumed }
                stream.avail_in = uInt(inputBefore)
                stream.next_out = target.baseAddress! + offset
                stream.avail_out = uInt(room)
                defer {
                    stream.next_in = nil
                    stream.next_out = nil
                }
                return CSystemZlib.inflate(&stream, Z_NO_FLUSH)
            }
        }
        let step = Step(
            consumed: inputBefore - Int(stream.avail_in), produced: room - Int(stream.avail_out),
            ended: status == Z_STREAM_END)
        consumed += step.consumed
        switch status {
        // Z_BUF_ERROR: no progress was possible (no input left, or no room); the caller decides.
        case Z_OK, Z_STREAM_END, Z_BUF_ERROR:
            return step
        case Z_NEED_DICT:
            throw TraceReadError(file: name, line: nil, reason: "corrupt deflate data: it asks for a preset dictionary")
        case Z_MEM_ERROR:
            throw TraceReadError(file: name, line: nil, reason: "out of memory while inflating")
        default:
            let detail = stream.msg.map { ": " + String(cString: $0) } ?? ""
            throw TraceReadError(file: name, line: nil, reason: "corrupt deflate data" + detail)
        }
    }
}
