/// Limits of the feeds that operators can configure.
public struct FeedRules: Sendable {
    /// Largest NEARBY (and WATCH) radius in metres; default 50 km.
    public var maximumRadiusMeters: Double
    /// Watches one connection may hold at once; default 16.
    public var maximumWatchesPerConnection: Int

    public init(maximumRadiusMeters: Double = 50_000, maximumWatchesPerConnection: Int = 16) {
        self.maximumRadiusMeters = maximumRadiusMeters
        self.maximumWatchesPerConnection = maximumWatchesPerConnection
    }
}
