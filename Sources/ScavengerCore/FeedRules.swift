/// Limits of the feeds that operators can configure.
public struct FeedRules: Sendable {
    /// Largest NEARBY radius in metres; default 50 km.
    public var maximumRadiusMeters: Double

    public init(maximumRadiusMeters: Double = 50_000) {
        self.maximumRadiusMeters = maximumRadiusMeters
    }
}
