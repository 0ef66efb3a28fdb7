package import FencepostCore
import Foundation

/// An external merge sort for fixes: sorted runs spill to temporary files, then merge in time
/// order, so an input in any order is processed in time order in bounded memory.
package final class FixRuns {
    private var files: [URL] = []
    private var devices: [String] = []
    private var deviceIndex: [String: Int] = [:]
    /// Each record: time, lat, lon, accuracy, altitude, speed (NaN for none), device index.
    private static let fieldsPerFix = 7

    package init() {}

    package var isEmpty: Bool { files.isEmpty }

    deinit {
        removeAll()
    }

    /// Writes fixes (already sorted) as one run.
    package func spill(_ fixes: [Fix]) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fencepost-run-\(UUID().uuidString).bin")
        var values: [Double] = []
        values.reserveCapacity(fixes.count * Self.fieldsPerFix)
        for fix in fixes {
            let device: Int
            if let known = deviceIndex[fix.device] {
                device = known
            } else {
                device = devices.count
                devices.append(fix.device)
                deviceIndex[fix.device] = device
            }
            values.append(contentsOf: [
                fix.time, fix.lat, fix.lon, fix.accuracy ?? .nan, fix.altitude ?? .nan, fix.speed ?? .nan,
                Double(device),
            ])
        }
        let data = values.withUnsafeBytes { Data($0) }
        try data.write(to: url)
        files.append(url)
    }

    /// Every spilled fix and the `inMemory` ones (sorted), in time order; at equal times,
    /// earlier runs first, so each device keeps its input order. The runs' files stay until
    /// ``removeAll()``.
    package func merging(with inMemory: [Fix]) throws -> Merge {
        try Merge(readers: files.map { try RunReader(url: $0, devices: devices) }, inMemory: inMemory)
    }

    /// The runs merged, a fix at a time.
    package struct Merge {
        private var readers: [RunReader]
        private let inMemory: [Fix]
        private var memoryIndex = 0
        /// The run heads as (time, source), kept sorted (smallest last); the in-memory run is last.
        private var heads: [(time: Double, source: Int)] = []

        fileprivate init(readers: [RunReader], inMemory: [Fix]) {
            self.readers = readers
            self.inMemory = inMemory
            for (source, reader) in readers.enumerated() {
                if let fix = reader.current { heads.append((fix.time, source)) }
            }
            if !inMemory.isEmpty { heads.append((inMemory[0].time, readers.count)) }
            heads.sort { ($0.time, $0.source) > ($1.time, $1.source) }  // smallest last
        }

        package mutating func next() throws -> Fix? {
            guard let head = heads.popLast() else { return nil }
            let fix: Fix
            let next: Double?
            if head.source == readers.count {
                fix = inMemory[memoryIndex]
                memoryIndex += 1
                next = memoryIndex < inMemory.count ? inMemory[memoryIndex].time : nil
            } else {
                fix = readers[head.source].current!
                try readers[head.source].advance()
                next = readers[head.source].current?.time
            }
            if let next {
                let entry = (time: next, source: head.source)
                let index = heads.firstIndex { ($0.time, $0.source) < (entry.time, entry.source) } ?? heads.count
                heads.insert(entry, at: index)
            }
            return fix
        }
    }

    package func removeAll() {
        for file in files { try? FileManager.default.removeItem(at: file) }
        files.removeAll()
    }

    /// Reads one run back in blocks.
    fileprivate struct RunReader {
        private let handle: FileHandle
        private let devices: [String]
        private var block: [Double] = []
        private var index = 0
        private(set) var current: Fix?

        init(url: URL, devices: [String]) throws {
            handle = try FileHandle(forReadingFrom: url)
            self.devices = devices
            try advance()
        }

        mutating func advance() throws {
            if index >= block.count {
                let data = try handle.read(upToCount: 8 * FixRuns.fieldsPerFix * 8192) ?? Data()
                block = data.withUnsafeBytes { Array($0.bindMemory(to: Double.self)) }
                index = 0
                guard !block.isEmpty else {
                    current = nil
                    try? handle.close()
                    return
                }
            }
            func optional(_ value: Double) -> Double? { value.isNaN ? nil : value }
            current = Fix(
                device: devices[Int(block[index + 6])], time: block[index], lat: block[index + 1],
                lon: block[index + 2],
                accuracy: optional(block[index + 3]), altitude: optional(block[index + 4]),
                speed: optional(block[index + 5]))
            index += FixRuns.fieldsPerFix
        }
    }
}
