/// The unread part of a ``ByteSource`` in one buffer, for parsers that look ahead.
///
/// `more()` drops what was consumed and moves what remains to the front, so an index into
/// `buffer` held across a call to `more()` must be kept relative to `position`.
struct ChunkWindow {
    let source: ByteSource
    var buffer: [UInt8] = []
    /// The first unread byte.
    private(set) var position = 0
    private(set) var finished = false
    /// The line `position` is on, for error messages.
    private(set) var line = 1

    init(source: ByteSource) {
        self.source = source
    }

    /// Makes at least `count` unread bytes available; false when the input ends first.
    mutating func ensure(_ count: Int) throws(TraceReadError) -> Bool {
        while buffer.count - position < count {
            guard try more() else { return false }
        }
        return true
    }

    /// Reads another chunk, first dropping what has been consumed; false at the end.
    mutating func more() throws(TraceReadError) -> Bool {
        guard !finished else { return false }
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        guard let chunk = try source.read() else {
            finished = true
            return false
        }
        buffer.append(contentsOf: chunk)
        return true
    }

    /// Consumes the bytes up to `index`, counting the lines passed.
    mutating func advance(to index: Int) {
        for byte in buffer[position..<index] where byte == 0x0A { line += 1 }
        position = index
    }

    mutating func advance(by count: Int) {
        advance(to: position + count)
    }

    func failure(_ reason: String) -> TraceReadError {
        TraceReadError(file: source.name, line: line, reason: reason)
    }
}
