import Dispatch
import Foundation

/// Pure work over a large array spread across the machine's cores, in contiguous chunks, with the
/// results in input order: what a million regions are read and hashed with.
package enum ParallelMap {
    /// `transform` of every item, in order. Each chunk gets its own `state` (made on the thread
    /// that runs the chunk and used only there: a GEOS context, which is confined to one
    /// thread). Fewer than `serialBelow` items, or one core, run on the calling thread.
    package static func map<Item: Sendable, State, Result: Sendable>(
        _ items: [Item], serialBelow: Int = 2048, state makeState: @Sendable () -> State,
        _ transform: @Sendable (inout State, Item) -> Result
    ) -> [Result] {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard items.count >= serialBelow, cores > 1 else {
            var state = makeState()
            return items.map { transform(&state, $0) }
        }
        // Several chunks per core, so that a core done early takes another.
        let chunks = min(cores * 8, max(1, items.count / 256))
        let chunkSize = (items.count + chunks - 1) / chunks
        return [Result](unsafeUninitializedCapacity: items.count) { buffer, initialized in
            items.withUnsafeBufferPointer { source in
                let shared = Shared(source: source, results: buffer.baseAddress!)
                DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                    let start = chunk * chunkSize
                    let end = min(start + chunkSize, shared.source.count)
                    guard start < end else { return }
                    var state = makeState()
                    for index in start..<end {
                        (shared.results + index).initialize(to: transform(&state, shared.source[index]))
                    }
                }
            }
            initialized = items.count
        }
    }

    /// `transform` of every item, in order, without per-chunk state.
    package static func map<Item: Sendable, Result: Sendable>(
        _ items: [Item], serialBelow: Int = 2048, _ transform: @Sendable (Item) -> Result
    ) -> [Result] {
        map(items, serialBelow: serialBelow, state: { () }) { _, item in transform(item) }
    }

    /// The input and the results' storage, lent to the chunks for the duration of one
    /// `concurrentPerform`: `@unchecked Sendable` because the input is only read and each chunk
    /// initializes only its own, disjoint range of the results.
    private struct Shared<Item, Result>: @unchecked Sendable {
        let source: UnsafeBufferPointer<Item>
        let results: UnsafeMutablePointer<Result>
    }
}
