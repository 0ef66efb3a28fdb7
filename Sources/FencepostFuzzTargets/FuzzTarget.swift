import Dispatch

/// One path that takes outside input, driven with arbitrary bytes: by libFuzzer in the
/// `fencepost-fuzz` executable (the FuzzTesting package, built with `-sanitize=fuzzer,address`),
/// and by the tests, which replay the saved corpus and every crash found so far through the
/// ordinary build.
///
/// A target never crashes on any input: a refusal is a thrown error, caught here. Where a
/// path makes a promise beyond not crashing (a parsed value written out and read again is the
/// same value; the same file ingested twice adds nothing; no request is answered 5xx), the
/// target checks it and traps when it breaks, so the fuzzer reports it.
public struct FuzzTarget: Sendable {
    public let name: String
    /// What the target feeds the bytes to.
    public let summary: String
    private let body: @Sendable ([UInt8]) async -> FuzzOutcome

    init(_ name: String, _ summary: String, _ body: @escaping @Sendable ([UInt8]) -> FuzzOutcome) {
        self.name = name
        self.summary = summary
        self.body = { body($0) }
    }

    /// A target whose path is asynchronous (a store, the router).
    init(async name: String, _ summary: String, _ body: @escaping @Sendable ([UInt8]) async -> FuzzOutcome) {
        self.name = name
        self.summary = summary
        self.body = body
    }

    /// Feeds one input to the path.
    @discardableResult
    public func run(_ bytes: [UInt8]) async -> FuzzOutcome {
        await body(bytes)
    }

    /// ``run(_:)`` from a thread outside Swift's concurrency pool (libFuzzer's), waiting for it.
    @discardableResult
    public func runBlocking(_ bytes: [UInt8]) -> FuzzOutcome {
        let done = DispatchSemaphore(value: 0)
        let outcome = OutcomeBox()
        Task {
            outcome.value = await run(bytes)
            done.signal()
        }
        done.wait()
        return outcome.value
    }

    public static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }

    /// Every target, in the order `tools/fuzz --list` prints them.
    public static let all: [FuzzTarget] =
        TraceTargets.all + PayloadTargets.all + MQTTTargets.all + DocumentTargets.all + WholePathTargets.all
}

/// The outcome handed from the task to the waiting thread (written before the semaphore is
/// signalled, read after it is waited for: no other access).
private final class OutcomeBox: @unchecked Sendable {
    var value: FuzzOutcome = .refused
}

/// What a path made of one input.
public enum FuzzOutcome: Sendable, Equatable {
    /// Read: this many items (fixes, regions, mutations, records…).
    case accepted(Int)
    /// Refused with an error, as bad input should be.
    case refused
}

/// A promise a path broke: a crash for the fuzzer to report, with what broke.
func violated(_ promise: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError("fuzz target property violated: \(promise)", file: file, line: line)
}
