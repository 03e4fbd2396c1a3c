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
        let factory = factory ?? PrometheusMetricsFactory(registry: registry)
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

    /// Bootstraps the process's `MetricsSystem` with a Prometheus factory over a new registry;
    /// call once, at start-up.
    public static func bootstrap() -> DaemonMetrics {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return DaemonMetrics(registry: registry, factory: MetricsSystem.factory)
    }
}
