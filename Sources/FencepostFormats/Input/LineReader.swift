/// Splits a ``ByteSource`` into lines (LF or CRLF), numbering them from 1.
package struct LineReader {
    private let source: ByteSource
    private var buffer: [UInt8] = []
    private var start = 0
    private var finished = false
    package private(set) var lineNumber = 0

    package init(source: ByteSource) {
        self.source = source
    }

    package var name: String { source.name }

    /// The next line without its terminator, or nil at the end.
    package mutating func next() throws(TraceReadError) -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                var end = newline
                if end > start, buffer[end - 1] == 0x0D { end -= 1 }
                let line = buffer[start..<end]
                start = newline + 1
                lineNumber += 1
                return line
            }
            if finished {
                guard start < buffer.count else { return nil }
                var end = buffer.count
                if buffer[end - 1] == 0x0D { end -= 1 }
                let line = buffer[start..<end]
                start = buffer.count
                lineNumber += 1
                return line
            }
            // Keep the unfinished line, drop the rest, and read on.
            buffer.removeFirst(start)
            start = 0
            if let chunk = try source.read() {
                buffer.append(contentsOf: chunk)
            } else {
                finished = true
            }
        }
    }
}
