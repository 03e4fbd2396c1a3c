import ScavengerCore
import ScavengerStore

/// Whether the daemon can serve: what `/healthz` reports.
public struct BoardHealth: Sendable, Equatable {
    /// The database answered a ping in time.
    public var databaseAnswers: Bool
    /// The live feed is loaded (NEARBY, REGION and WATCH can be answered).
    public var feedLoaded: Bool

    public init(databaseAnswers: Bool, feedLoaded: Bool) {
        self.databaseAnswers = databaseAnswers
        self.feedLoaded = feedLoaded
    }

    /// Both hold.
    public var isHealthy: Bool { databaseAnswers && feedLoaded }
}

/// The board's gauges and counters, read without touching the database: what `/metrics` shows.
public struct BoardStatistics: Sendable, Equatable {
    /// Live pins in the feed (0 until it is loaded).
    public var feedPins: Int
    /// Watches open now, on every connection.
    public var watches: Int
    /// Events handed to watches since the daemon started.
    public var eventsPublished: Int
    /// Calls waiting for a database connection now.
    public var databaseWaiting: Int
    /// Calls that had to wait for a database connection, since the daemon started.
    public var databaseWaits: Int
    /// The time those calls spent waiting, summed.
    public var databaseWaited: Duration
    /// Users on the all-time ranking and on this week's (0 until the rankings are loaded).
    public var rankedUsers: Int = 0
    public var rankedUsersThisWeek: Int = 0
    /// Transactions run again after a deadlock or a serialization failure (never shown to a
    /// client), and those that still failed after every try, since the daemon started.
    public var transactionRetries: Int = 0
    public var transactionRetriesExhausted: Int = 0
    /// Times a change log (pins' or hunts') was found rewritten under this daemon's place (a
    /// failover to a standby without the last changes), each a reload.
    public var changeLogRewrites: Int = 0
}

extension Board {
    /// The label of the histogram of pins written per group commit, for whoever sets its buckets.
    public static var groupCommitSizeLabel: String { Database.groupSizeLabel }

    /// Pings the database (answered within `timeoutSeconds`, or counted as not answering) and
    /// asks the feed whether it is loaded. Never throws: a failure is an unhealthy answer.
    public func health(timeoutSeconds: Double) async -> BoardHealth {
        let store = self.store
        let answered = await withTimeout(seconds: timeoutSeconds) { try await store.ping() } != nil
        return BoardHealth(databaseAnswers: answered, feedLoaded: feed.isLoaded)
    }

    /// The in-memory gauges and counters.
    public func statistics() -> BoardStatistics {
        let waits = store.pool.waitStatistics
        let week = RankingPeriod.thisWeek.board(at: clock.now)
        let ranked = feed.hunts.withRankings { ($0.count(.allTime), $0.count(week)) } ?? (0, 0)
        let retries = store.pool.retryStatistics
        return BoardStatistics(
            feedPins: feed.isLoaded ? feed.count : 0, watches: feed.watches.count + feed.hunts.watchCount,
            eventsPublished: feed.watches.eventsPublished, databaseWaiting: waits.waiting, databaseWaits: waits.waits,
            databaseWaited: waits.waited, rankedUsers: ranked.0, rankedUsersThisWeek: ranked.1,
            transactionRetries: retries.retries, transactionRetriesExhausted: retries.exhausted,
            changeLogRewrites: feed.logRewrites + feed.hunts.logRewrites)
    }

    /// Open items in the moderation queue (a count query), or nil when the database does not
    /// answer within `timeoutSeconds`.
    public func openModerationItems(timeoutSeconds: Double) async -> Int? {
        let store = self.store
        return await withTimeout(seconds: timeoutSeconds) { try await store.openModerationItemCount() }
    }
}
