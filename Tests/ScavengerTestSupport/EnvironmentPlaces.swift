import Testing

/// A suite trait: before the suite's tests start, the suite takes `count` of the shared
/// ``TestEnvironment`` places (waiting, when the run is full, as long as it takes: no test's
/// time limit has started yet), and its tests' environments take theirs from those. So a test's
/// time limit counts only the wait behind its own suite's tests, never the queue of a whole
/// run, and can stay the short hang guard it is meant to be. `count` must cover the
/// environments one test holds at once (every test here makes one), or that test waits for
/// itself until its time limit ends it.
public struct EnvironmentPlaces: SuiteTrait, TestScoping {
    public let count: Int
    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let shared = TestEnvironment.Slot.shared
        for _ in 0 ..< count { await shared.take() }
        defer { for _ in 0 ..< count { shared.give() } }
        try await TestEnvironment.Slot.$suitePlaces.withValue(TestEnvironment.PlacePool(places: count)) {
            try await function()
        }
    }
}

extension Trait where Self == EnvironmentPlaces {
    /// The suite takes `count` environment places before its tests start (``EnvironmentPlaces``).
    public static func environmentPlaces(_ count: Int = 1) -> Self { EnvironmentPlaces(count: count) }
}
