import Synchronization

/// Runs `body` in a task of its own and returns its result, or nil once `seconds` have passed
/// (the task is then cancelled and left to finish on its own: a database call that ignores
/// cancellation cannot hold the caller).
func withTimeout<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () async throws -> T) async -> T? {
    let resumed = Mutex(false)
    return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        let resume: @Sendable (T?) -> Void = { value in
            let first = resumed.withLock { done in
                defer { done = true }
                return !done
            }
            if first { continuation.resume(returning: value) }
        }
        let work = Task {
            let value = try? await body()
            resume(value)
        }
        Task {
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            work.cancel()
            resume(nil)
        }
    }
}
