import Testing

/// Polls until `condition` holds, for at most `timeout`; records an issue naming `what` if it
/// never does. Returns whether it held.
@discardableResult
public func eventually(
    _ what: String, timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    if try await condition() { return true }
    Issue.record("timed out after \(timeout) waiting until \(what)", sourceLocation: sourceLocation)
    return false
}
