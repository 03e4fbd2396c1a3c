import Testing

/// Polls until `condition` holds; records an issue naming `what` if it has not after `timeout`,
/// which only guards against a hang (the default 60 s is far beyond what any wait should take on
/// a loaded machine): wait for a state here, never for an amount of time. Returns whether it held.
@discardableResult
public func eventually(
    _ what: String, timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws -> Bool {
    if try await poll(timeout: timeout, condition) { return true }
    Issue.record("timed out after \(timeout) waiting until \(what)", sourceLocation: sourceLocation)
    return false
}

/// ``eventually(_:timeout:sourceLocation:_:)`` without the issue: whether `condition` came to
/// hold before `timeout`, for a caller that reports a timeout its own way (a model-based test
/// that shrinks a failing sequence replays it many times and reports only the shortest).
public func poll(timeout: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}
