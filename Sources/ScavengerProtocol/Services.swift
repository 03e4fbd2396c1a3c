import ScavengerCore
import ScavengerFeed
import ScavengerStore
import Sodium

/// Limits of the feeds that operators can configure.
public struct FeedRules: Sendable {
    /// Largest NEARBY radius in metres; default 50 km.
    public var maximumRadiusMeters: Double

    public init(maximumRadiusMeters: Double = 50_000) {
        self.maximumRadiusMeters = maximumRadiusMeters
    }
}

/// Limits of the protocol that operators can configure.
public struct ProtocolLimits: Sendable {
    /// Longest request line in bytes (the line ending not counted); default 8 MiB.
    public var maxLineBytes: Int

    public init(maxLineBytes: Int = 8 * 1024 * 1024) {
        self.maxLineBytes = maxLineBytes
    }
}

/// Everything the command handlers share: the store, the limits, the version.
public struct Services: Sendable {
    /// The daemon's version, as `HELLO` reports it.
    public static let version = "0.1.0"
    /// The protocol version of `../shared/protocol.md` this daemon speaks.
    public static let protocolVersion = 1

    public var database: Database?
    public var limits: ProtocolLimits
    /// Hashes and verifies passwords off the event loops.
    public var passwordHasher: PasswordHasher?
    /// TTLs and photo size.
    public var pinRules: PinRules
    /// How long a login lasts; default 30 days.
    public var sessionTTLSeconds: Int
    /// The live feed in memory.
    public var feed: Feed?
    /// NEARBY's radius limit.
    public var feedRules: FeedRules
    /// Report threshold, claim lease, report rate, default ban.
    public var moderationRules: ModerationRules

    public init(
        database: Database?,
        limits: ProtocolLimits = ProtocolLimits(),
        passwordHasher: PasswordHasher? = nil,
        pinRules: PinRules = PinRules(),
        sessionTTLSeconds: Int = 30 * 24 * 3600,
        feed: Feed? = nil,
        feedRules: FeedRules = FeedRules(),
        moderationRules: ModerationRules = ModerationRules()
    ) {
        self.moderationRules = moderationRules
        self.feed = feed
        self.feedRules = feedRules
        self.database = database
        self.limits = limits
        self.passwordHasher = passwordHasher
        self.pinRules = pinRules
        self.sessionTTLSeconds = sessionTTLSeconds
    }

    /// The feed, or `UNAVAILABLE` when the daemon runs without one.
    public func requireFeed() throws(CommandError) -> Feed {
        guard let feed else { throw CommandError(.unavailable, "the feed is not loaded") }
        return feed
    }

    /// The password hasher, or `UNAVAILABLE` when the daemon runs without one.
    public func requireHasher() throws(CommandError) -> PasswordHasher {
        guard let passwordHasher else { throw CommandError(.unavailable, "accounts are not configured") }
        return passwordHasher
    }

    /// The store, or `UNAVAILABLE` when the daemon runs without one.
    public func requireDatabase() throws(CommandError) -> Database {
        guard let database else { throw CommandError(.unavailable, "no database is configured") }
        return database
    }
}
