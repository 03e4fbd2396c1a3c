/// Fails instead of hanging when `body` has not finished after `seconds`: a guard against hangs,
/// never a measure of speed. Tests share the machine with every other suite (and CI with other
/// builds), so keep it generous (the default is 60 s) and assert on what happened instead.
/// `body` must end when cancelled (NIO's channels and `Task.sleep` do; a blocking call, such as
/// a libpq query waiting for a lock, does not, and then this waits with it).
public func withTimeout<T: Sendable>(
    _ seconds: Double = 60, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimedOut(seconds: seconds)
        }
        let value = try await group.next()!
        group.cancelAll()
        return value
    }
}

/// What ``withTimeout(_:_:)`` throws when its body hangs.
public struct TimedOut: Error, CustomStringConvertible {
    public let seconds: Double
    public var description: String { "timed out after \(seconds) s" }
}
