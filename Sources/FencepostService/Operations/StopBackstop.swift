import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Makes sure a stop signal stops the process, whatever a service does with it: a second
/// SIGTERM or SIGINT ends the process at once, and so does the first one if the service has not
/// stopped `grace` seconds after it. The graceful path (answer, commit, stop) runs first; this
/// is the bound on it. Ending the process mid-transaction is safe: the store rolls an
/// unfinished transaction back, and no request was answered before its commit.
final class StopBackstop {
    private let sources: [any DispatchSourceSignal]
    private let state = SignalCount()

    /// Signals seen, and whether the service stopped; shared with the signal handlers.
    private final class SignalCount: Sendable {
        let value = Mutex<(signals: Int, finished: Bool)>((0, false))
        func withLock<T>(_ body: (inout (signals: Int, finished: Bool)) -> T) -> T { value.withLock { body(&$0) } }
    }

    init(grace: Double) {
        var sources: [any DispatchSourceSignal] = []
        let state = self.state
        for number in [SIGTERM, SIGINT] {
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let count = state.withLock { state -> Int in
                    state.signals += 1
                    return state.finished ? 0 : state.signals
                }
                if count == 1 {
                    DispatchQueue.global().asyncAfter(deadline: .now() + grace) {
                        guard !state.withLock({ $0.finished }) else { return }
                        Self.end("not stopped \(Int(grace)) s after the stop signal: exiting", code: 1)
                    }
                } else if count > 1 {
                    Self.end("a second stop signal: exiting at once", code: 128 + number)
                }
            }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    /// The service stopped by itself: the backstop stands down.
    func finish() {
        state.withLock { $0.finished = true }
        for source in sources { source.cancel() }
    }

    private static func end(_ message: String, code: Int32) -> Never {
        let line = Array("fencepost: \(message)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        _exit(code)
    }
}
