import ArgumentParser
import Foundation

/// How a command fails: a message on stderr and an exit code that says what kind of failure.
enum CommandFailure: Error {
    /// The input was refused; nothing was written. Exit code 1.
    case invalidInput([String])
    /// The store or an output file could not be opened, read or written. Exit code 3.
    case io(String)

    var exitCode: ExitCode {
        switch self {
        case .invalidInput: return ExitCode(1)
        case .io: return ExitCode(3)
        }
    }

    var lines: [String] {
        switch self {
        case .invalidInput(let lines): return lines
        case .io(let message): return [message]
        }
    }
}

extension CommandFailure {
    /// Runs `body`, turning a ``CommandFailure`` into its message on stderr and its exit code,
    /// and any other error into an I/O failure (the only other thing that can go wrong).
    static func reporting<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw exitCode(reporting: error)
        }
    }

    /// ``reporting(_:)`` for async work.
    static func reporting<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw exitCode(reporting: error)
        }
    }

    /// Prints what went wrong on stderr and returns the exit code it means.
    private static func exitCode(reporting error: any Error) -> ExitCode {
        switch error {
        case let failure as CommandFailure:
            Console.error(failure.lines)
            return failure.exitCode
        case let exit as ExitCode:
            return exit
        default:
            Console.error(["error: \(error)"])
            return ExitCode(3)
        }
    }
}

/// Writing to stdout (results) and stderr (diagnostics).
enum Console {
    /// A reader that went away (`| head`) is not an error worth a crash: the text is dropped.
    static func output(_ text: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data((text + "\n").utf8))
    }

    static func error(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        try? FileHandle.standardError.write(contentsOf: Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
