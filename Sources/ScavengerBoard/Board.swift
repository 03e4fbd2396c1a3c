import Synchronization
import Logging
import ScavengerCore
import ScavengerFeed
import ScavengerStore
import Vips
import Sodium

/// The rules operators can configure, in one place.
public struct BoardRules: Sendable {
    /// TTLs and photo size.
    public var pins: PinRules
    /// NEARBY's radius limit.
    public var feed: FeedRules
    /// Report threshold, claim lease, report rate, default ban.
    public var moderation: ModerationRules
    /// How long a login lasts; default 30 days.
    public var sessionTTLSeconds: Int
    /// Each user's rates for POST, POSTPHOTO, REPLY and REPORT.
    public var writeRates: WriteRates
    /// Failed-login back-off per address and per account.
    public var loginThrottle: LoginThrottleRules
    /// REGISTERs and FORGOTs per client address, together, on every daemon; default 10 an
    /// hour. Nil: unlimited.
    public var registrationRate: RateLimit?
    /// Password checks that may wait for the hasher before more are refused; default 64.
    public var passwordQueueLength: Int
    /// Stops per hunt, wrong-code lockout, travel-speed check.
    public var hunts: HuntRules
    /// JOINs by a code that finds no hunt, per client address (against guessing codes); default
    /// 20 per 10 minutes. Nil: unlimited.
    public var joinFailureRate: RateLimit?
    /// How long a write's `REQUEST` key holds its result, in seconds; default 24 hours.
    public var requestKeySeconds: Int
    /// The operator's secret for the HMAC that stores a `REQUEST` key's request as a digest (so
    /// no stored digest tests a guessed stop code or password without it); every daemon on one
    /// database needs the same. Nil: one made once and kept in the database.
    public var requestKeySecret: String?
    /// Reset and verification codes and their mail (FORGOT, RESET, VERIFY).
    public var recovery: RecoveryRules

    public init(
        pins: PinRules = PinRules(), feed: FeedRules = FeedRules(), moderation: ModerationRules = ModerationRules(),
        sessionTTLSeconds: Int = 30 * 24 * 3600, writeRates: WriteRates = WriteRates(),
        loginThrottle: LoginThrottleRules = LoginThrottleRules(),
        registrationRate: RateLimit? = RateLimit(count: 10, seconds: 3600), passwordQueueLength: Int = 64,
        hunts: HuntRules = HuntRules(), joinFailureRate: RateLimit? = RateLimit(count: 20, seconds: 600),
        requestKeySeconds: Int = 24 * 3600, requestKeySecret: String? = nil,
        recovery: RecoveryRules = RecoveryRules()
    ) {
        self.recovery = recovery
        self.requestKeySeconds = requestKeySeconds
        self.requestKeySecret = requestKeySecret
        self.joinFailureRate = joinFailureRate
        self.pins = pins
        self.feed = feed
        self.moderation = moderation
        self.sessionTTLSeconds = sessionTTLSeconds
        self.writeRates = writeRates
        self.loginThrottle = loginThrottle
        self.registrationRate = registrationRate
        self.passwordQueueLength = passwordQueueLength
        self.hunts = hunts
    }
}

/// The application layer: one call per use case (register, log in, post, delete, reply, report,
/// claim, resolve, ban, …). Each write goes to the store and then, once committed, to the live
/// feed, so no front end can forget the feed. Every front end (the line protocol today) parses
/// its input, calls one method here, and encodes the result.
///
/// Calls that act for someone take the connection's ``Session``: the board checks it against the
/// database and keeps it up to date (a revoked session is forgotten, a changed role is seen).
/// Every call throws only ``BoardError``: a refusal (the caller's input or rights), the database's
/// absence (`unavailable`, logged here), or an internal failure (logged here with its cause).
/// Front ends import this module and ScavengerCore, never the store, the feed or the pin index.
public final class Board: Sendable {
    /// The live feed; its store is ``store``.
    let feed: Feed
    /// Hashes and verifies passwords off the event loops.
    let passwords: PasswordHasher
    /// The rules operators configured.
    public let rules: BoardRules
    /// The bounded, two-lane line in front of ``passwords``.
    let passwordQueue: PasswordQueue
    /// Failed logins per address and account.
    let loginThrottle: LoginThrottle
    /// JOINs by a code that found no hunt, per address.
    let joinFailures: FailureLimiter
    /// The connections logged in on this daemon, checked when sessions end.
    let signedIn = SignedInSessions()
    /// Where failures that are not the caller's are logged, once, with their cause.
    let logger: Logger
    /// The time as the board judges it in memory: whether a hunt is running before a check-in
    /// is sent, a new schedule's `STARTS` and `ENDS`, a hunt's state as replies show it, the
    /// week of a ranking. (What the database decides inside a transaction, it decides by its
    /// own clock.)
    let clock: any WallClock

    /// Makes photos' sizes in the background (two at a time, off the event loops).
    let photoSizes: PhotoSizeMaker
    /// The photo bytes served most recently over HTTP (64 MiB at most).
    let photoFiles = PhotoFileCache(budgetBytes: 64 << 20)

    /// The PostgreSQL store behind the feed.
    var store: Database { feed.database }

    /// - Parameter clock: the time of day; by default the feed's (the system's unless a test
    ///   holds one), so that the board and its feed never disagree on it.
    public init(
        feed: Feed, passwords: PasswordHasher, rules: BoardRules = BoardRules(),
        logger: Logger = Logger(label: "scavenger.board"), clock: (any WallClock)? = nil
    ) {
        self.feed = feed
        self.clock = clock ?? feed.clock
        self.passwords = passwords
        self.rules = rules
        self.logger = logger
        passwordQueue = PasswordQueue(hasher: passwords, maximumWaiting: rules.passwordQueueLength)
        loginThrottle = LoginThrottle(rules: rules.loginThrottle)
        joinFailures = FailureLimiter(rate: rules.joinFailureRate)
        photoSizes = PhotoSizeMaker(store: feed.database, workers: ImageWorkers(threads: 2), limits: rules.pins.pixelLimits, logger: logger)
        feed.database.sessionEndings.onEnded { [weak self] ended in
            guard let self else { return }
            Task { await self.endSessions(ended) }
        }
    }

    /// The hunt of each stop checked in at (a stop never moves to another hunt), so a check-in
    /// finds its hunt's board without a read; emptied when it holds ``stopHuntsKept``.
    let stopHunts = Mutex<[String: String]>([:])
    static let stopHuntsKept = 100_000

    /// The HMAC key of `REQUEST` keys, once read (``loadRequestKeySecret()``).
    let requestKeySecret = Mutex<[UInt8]?>(nil)

    /// Set when the daemon is about to stop (a rolling restart): health checks then answer
    /// that it is draining, so a load balancer sends it nothing new, while it still serves.
    private let draining = Atomic<Bool>(false)

    /// The daemon is about to stop: from now on its health is "draining".
    public func beginDraining() { draining.store(true, ordering: .relaxed) }

    /// Whether ``beginDraining()`` was called.
    public var isDraining: Bool { draining.load(ordering: .relaxed) }
}
