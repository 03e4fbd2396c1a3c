import CoreMetrics
import ScavengerBoard
import Prometheus
import ScavengerProtocol
import Synchronization

/// The daemon's gauges and counters besides the per-request ones (``RequestMetrics``), and the
/// registry `/metrics` prints.
///
/// Gauges that describe state (connections, pins in the feed, open moderation items) are read
/// when `/metrics` is scraped, so serving requests costs nothing for them.
public final class DaemonMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    public let factory: any MetricsFactory
    let connections: CoreMetrics.Gauge
    let feedPins: CoreMetrics.Gauge
    let moderationOpenItems: CoreMetrics.Gauge
    /// Open WATCH subscriptions, read from the feed's hub on scrape.
    let watches: CoreMetrics.Gauge
    let rankedUsers: CoreMetrics.Gauge
    let rankedUsersThisWeek: CoreMetrics.Gauge
    /// Events the hub published, mirrored from its count on scrape.
    let events: MirroredCounter
    /// Calls that queued for a database connection, and their summed wait, mirrored from the pool.
    let poolWaits: MirroredCounter
    let poolWaitSeconds: MirroredCounter
    /// Calls queued for a database connection now.
    let poolWaiting: CoreMetrics.Gauge
    /// Transactions run again after a deadlock or serialization failure, and those given up.
    let transactionRetries: MirroredCounter
    let transactionRetriesExhausted: MirroredCounter
    let changeLogRewrites: MirroredCounter

    /// Metrics into `registry`, through a Prometheus factory of its own (tests), or through
    /// `factory` when given (the daemon passes the bootstrapped `MetricsSystem.factory`, which
    /// writes into the same registry).
    public init(registry: PrometheusCollectorRegistry, factory: (any MetricsFactory)? = nil) {
        self.registry = registry
        let factory = factory ?? Self.prometheusFactory(registry)
        self.factory = factory
        connections = CoreMetrics.Gauge(label: "scavenger_connections", factory: factory)
        feedPins = CoreMetrics.Gauge(label: "scavenger_feed_pins", factory: factory)
        moderationOpenItems = CoreMetrics.Gauge(label: "scavenger_moderation_open_items", factory: factory)
        watches = CoreMetrics.Gauge(label: "scavenger_watches", factory: factory)
        rankedUsers = CoreMetrics.Gauge(label: "scavenger_ranked_users", factory: factory)
        rankedUsersThisWeek = CoreMetrics.Gauge(label: "scavenger_ranked_users_this_week", factory: factory)
        events = MirroredCounter(label: "scavenger_events_total", factory: factory)
        poolWaits = MirroredCounter(label: "scavenger_db_pool_waits_total", factory: factory)
        poolWaitSeconds = MirroredCounter(label: "scavenger_db_pool_wait_seconds_total", factory: factory)
        poolWaiting = CoreMetrics.Gauge(label: "scavenger_db_pool_waiting", factory: factory)
        transactionRetries = MirroredCounter(label: "scavenger_db_transaction_retries_total", factory: factory)
        transactionRetriesExhausted = MirroredCounter(label: "scavenger_db_transaction_retries_exhausted_total", factory: factory)
        changeLogRewrites = MirroredCounter(label: "scavenger_change_log_rewrites_total", factory: factory)
        for gauge in [watches, connections, feedPins, moderationOpenItems, poolWaiting, rankedUsers, rankedUsersThisWeek] { gauge.record(0) }
    }

    /// Mirrors the board's gauges: pins in the feed, watches, users ranked, events so far, and the database
    /// pool's queue (waits so far, their summed time, callers waiting now).
    func record(_ statistics: BoardStatistics) {
        feedPins.record(statistics.feedPins)
        watches.record(statistics.watches)
        rankedUsers.record(statistics.rankedUsers)
        rankedUsersThisWeek.record(statistics.rankedUsersThisWeek)
        events.follow(Double(statistics.eventsPublished))
        poolWaits.follow(Double(statistics.databaseWaits))
        let (seconds, attoseconds) = statistics.databaseWaited.components
        poolWaitSeconds.follow(Double(seconds) + Double(attoseconds) / 1e18)
        poolWaiting.record(statistics.databaseWaiting)
        transactionRetries.follow(Double(statistics.transactionRetries))
        transactionRetriesExhausted.follow(Double(statistics.transactionRetriesExhausted))
        changeLogRewrites.follow(Double(statistics.changeLogRewrites))
    }

    /// Per-request counters for `table`'s commands, in this registry.
    public func requestMetrics(for table: CommandTable) -> RequestMetrics {
        RequestMetrics(commands: table.commands.map(\.name), factory: factory)
    }

    /// Request latencies run from microseconds (in-memory commands) to seconds (the database):
    /// buckets from 100 µs to 10 s.
    static let requestDurationBuckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5),
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
    ]

    static func prometheusFactory(_ registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["scavenger_request_duration_seconds"] = requestDurationBuckets
        // Groups run from one pin to the group commit's batch limit (64).
        factory.valueHistogramBuckets[Board.groupCommitSizeLabel] = [1, 2, 4, 8, 16, 32, 64]
        return factory
    }

    /// Bootstraps the process's `MetricsSystem` with a Prometheus factory over a new registry;
    /// call once, at start-up.
    public static func bootstrap() -> DaemonMetrics {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(prometheusFactory(registry))
        return DaemonMetrics(registry: registry, factory: MetricsSystem.factory)
    }
}

/// A Prometheus counter that follows a running total kept elsewhere (the watch hub's events, the
/// pool's waits): on each scrape it moves by what the total gained since the last one, so the
/// code that keeps the total pays nothing for metrics.
final class MirroredCounter: Sendable {
    private let counter: FloatingPointCounter
    private let followed = Mutex(0.0)

    init(label: String, factory: any MetricsFactory) {
        counter = FloatingPointCounter(label: label, factory: factory)
        counter.increment(by: 0)
    }

    /// Moves the counter up to `total`; a smaller total (never expected) is ignored.
    func follow(_ total: Double) {
        let gain = followed.withLock { followed in
            defer { followed = max(followed, total) }
            return total - followed
        }
        if gain > 0 { counter.increment(by: gain) }
    }
}
