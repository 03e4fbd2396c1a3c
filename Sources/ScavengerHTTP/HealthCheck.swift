import ScavengerBoard

/// `/healthz`: healthy when the database answers and the feed is loaded. The answer is reused
/// for a short while so that a probe storm costs at most one ping per period.
public actor HealthCheck {
    public struct Status: Sendable, Equatable {
        public var healthy: Bool
        /// A short text for the response body.
        public var detail: String
    }

    private let check: @Sendable () async -> Status
    /// Asked before any cached answer: a draining daemon is unhealthy at once.
    private let draining: @Sendable () -> Bool
    private let cacheSeconds: Double
    private var cached: (status: Status, at: ContinuousClock.Instant)?
    private var running: Task<Status, Never>?

    /// - Parameters:
    ///   - board: asked for its health; the database's ping is bounded by `timeoutSeconds`.
    public init(board: Board, cacheSeconds: Double = 2, timeoutSeconds: Double = 2) {
        self.init(cacheSeconds: cacheSeconds, draining: { board.isDraining }) {
            let health = await board.health(timeoutSeconds: timeoutSeconds)
            switch (health.databaseAnswers, health.feedLoaded) {
            case (true, true): return Status(healthy: true, detail: "ok")
            case (false, true): return Status(healthy: false, detail: "database not answering")
            case (true, false): return Status(healthy: false, detail: "feed not loaded")
            case (false, false): return Status(healthy: false, detail: "database not answering; feed not loaded")
            }
        }
    }

    /// A check of the caller's own (tests).
    public init(cacheSeconds: Double, draining: @escaping @Sendable () -> Bool = { false }, check: @escaping @Sendable () async -> Status) {
        self.check = check
        self.draining = draining
        self.cacheSeconds = cacheSeconds
    }

    /// The last answer if fresh enough, else a new one; concurrent callers share one check.
    public func status() async -> Status {
        if draining() { return Status(healthy: false, detail: "draining: about to stop") }
        if let cached, ContinuousClock.now - cached.at < .milliseconds(Int(cacheSeconds * 1000)) {
            return cached.status
        }
        if let running { return await running.value }
        let task = Task { await check() }
        running = task
        let status = await task.value
        running = nil
        cached = (status, ContinuousClock.now)
        return status
    }
}
