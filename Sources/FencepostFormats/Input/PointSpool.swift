import Foundation

/// Timed points held back on disk until they can be judged: appended in blocks to a temporary
/// file, read back in the order written, the file removed once read (or with the spool).
/// Memory stays at one block whatever the number of points.
final class PointSpool {
    struct Point {
        var time: Double
        var lat: Double
        var lon: Double
    }

    /// Named in errors: the input the points come from.
    private let name: String
    private var url: URL?
    private var handle: FileHandle?
    private var block: [Double] = []
    private var readIndex = 0
    private var reading = false
    private static let blockPoints = 8192

    init(name: String) {
        self.name = name
    }

    deinit {
        try? handle?.close()
        if let url { try? FileManager.default.removeItem(at: url) }
    }

    func append(_ point: Point) throws(TraceReadError) {
        precondition(!reading, "appending to a spool being read")
        block.append(contentsOf: [point.time, point.lat, point.lon])
        if block.count >= 3 * Self.blockPoints { try flush() }
    }

    /// The next point in the order appended, nil after the last; no appends after the first call.
    func next() throws(TraceReadError) -> Point? {
        if !reading {
            reading = true
            if handle != nil {
                try flush()
                try? handle?.close()
                handle = nil
                block = []
                do {
                    handle = try FileHandle(forReadingFrom: url!)
                } catch {
                    throw failure("cannot read back its temporary file: \(error.localizedDescription)")
                }
            }
        }
        if readIndex >= block.count {
            guard let handle else { return nil }
            let data: Data
            do {
                data = try handle.read(upToCount: 8 * 3 * Self.blockPoints) ?? Data()
            } catch {
                throw failure("cannot read back its temporary file: \(error.localizedDescription)")
            }
            block = data.withUnsafeBytes { Array($0.bindMemory(to: Double.self)) }
            readIndex = 0
            guard !block.isEmpty else {
                try? handle.close()
                self.handle = nil
                if let url { try? FileManager.default.removeItem(at: url) }
                url = nil
                return nil
            }
        }
        defer { readIndex += 3 }
        return Point(time: block[readIndex], lat: block[readIndex + 1], lon: block[readIndex + 2])
    }

    private func flush() throws(TraceReadError) {
        do {
            if handle == nil {
                let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "fencepost-spool-\(UUID().uuidString).bin")
                guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
                    throw failure("cannot create a temporary file in \(FileManager.default.temporaryDirectory.path)")
                }
                url = file
                handle = try FileHandle(forWritingTo: file)
            }
            try handle?.write(contentsOf: block.withUnsafeBytes { Data($0) })
            block.removeAll(keepingCapacity: true)
        } catch let error as TraceReadError {
            throw error
        } catch {
            throw failure("cannot write a temporary file: \(error.localizedDescription)")
        }
    }

    private func failure(_ reason: String) -> TraceReadError {
        TraceReadError(file: name, line: nil, reason: reason)
    }
}
