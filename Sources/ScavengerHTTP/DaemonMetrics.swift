import CoreMetrics
import Prometheus
import ScavengerFeed
import ScavengerProtocol
import ScavengerStore

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
    /// Open WATCH subscriptions. Nothing sets it yet: the WATCH command's code should
    /// `increment()`/`decrement()` it (or `record` the count) when it lands.
    public let watches: CoreMetrics.Gauge
    /// Events pushed to watchers. Nothing counts them yet: WATCH's delivery should `increment()` it.
    public let events: CoreMetrics.Counter

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
        events = CoreMetrics.Counter(label: "scavenger_events_total", factory: factory)
        watches.record(0)
        connections.record(0)
        feedPins.record(0)
        moderationOpenItems.record(0)
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
