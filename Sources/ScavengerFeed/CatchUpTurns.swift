import ScavengerStore
import Synchronization

/// Runs catch-ups one at a time, and lets callers share them: a caller that arrives while one
/// runs waits for the next, which starts after it asked, and every caller waiting for that one
/// is answered by it. So each caller's answer comes from a read of the log that began after
/// its call, with at most one read in flight.
final class CatchUpTurns: Sendable {
    private enum Turn: Sendable {
        case done(Result<Void, StoreError>)
        case lead
    }

    private typealias Waiter = CheckedContinuation<Turn, Never>

    private struct State: ~Copyable {
        var running = false
        /// Runs started so far; the one running is number `started`.
        var started = 0
        /// Callers waiting for the run of that number (or a later one).
        var waiters: [(run: Int, waiter: Waiter)] = []
    }

    private let state = Mutex(State())

    /// Returns the outcome of a run of `work` that began after this call.
    func take(_ work: @Sendable () async throws(StoreError) -> Void) async throws(StoreError) {
        let leads = state.withLock { state -> Bool in
            guard !state.running else { return false }
            state.running = true
            state.started += 1
            return true
        }
        if !leads {
            let turn = await withCheckedContinuation { (waiter: Waiter) in
                let leadsNow = state.withLock { state -> Bool in
                    if !state.running {
                        state.running = true
                        state.started += 1
                        return true
                    }
                    state.waiters.append((state.started + 1, waiter))
                    return false
                }
                if leadsNow { waiter.resume(returning: .lead) }
            }
            if case .done(let outcome) = turn { return try outcome.get() }
        }
        let outcome: Result<Void, StoreError>
        do {
            try await work()
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        // Answer everyone this run served; hand the next run to one who needs it.
        let (served, next) = state.withLock { state -> ([Waiter], Waiter?) in
            let finished = state.started
            let served = state.waiters.filter { $0.run <= finished }.map(\.waiter)
            state.waiters.removeAll { $0.run <= finished }
            guard !state.waiters.isEmpty else {
                state.running = false
                return (served, nil)
            }
            state.started += 1
            return (served, state.waiters.removeFirst().waiter)
        }
        for waiter in served { waiter.resume(returning: .done(outcome)) }
        next?.resume(returning: .lead)
        try outcome.get()
    }
}
