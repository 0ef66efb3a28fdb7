import Foundation

/// Progress of long work on stderr, redrawn in place about twice a second; silent when stderr
/// is not a terminal, so logs and pipes stay clean.
struct Progress {
    private let enabled = isatty(STDERR_FILENO) == 1
    private var lastDraw = 0.0
    private var drawn = false

    /// Redraws `text` if half a second has passed since the last time.
    mutating func update(_ text: @autoclosure () -> String) {
        guard enabled else { return }
        let now = Date().timeIntervalSince1970
        guard now - lastDraw >= 0.5 else { return }
        lastDraw = now
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + text()).utf8))
        drawn = true
    }

    /// Clears the progress line before other output.
    mutating func clear() {
        guard drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        drawn = false
    }
}
