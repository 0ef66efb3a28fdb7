import ServiceLifecycle
import Synchronization

/// The background jobs of one service: registered while the application is assembled, then
/// sealed when it starts. Registering after that is a programming error (the job would never
/// be run or shut down with the rest), so it traps.
final class BackgroundJobs: Sendable {
    private let state = Mutex<(jobs: [any Service], sealed: Bool)>(([], false))

    func register(_ job: any Service) {
        state.withLock { state in
            precondition(!state.sealed, "a background job was registered after start-up: \(type(of: job))")
            state.jobs.append(job)
        }
    }

    /// The jobs, for the application's service group; no job can be added afterwards.
    func seal() -> [any Service] {
        state.withLock { state in
            state.sealed = true
            return state.jobs
        }
    }
}
