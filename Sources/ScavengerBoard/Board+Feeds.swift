import ScavengerCore
import ScavengerPinIndex

extension Board {
    /// Until the feed has been loaded (the database may not have been reachable yet), what
    /// needs it is refused with `UNAVAILABLE`.
    public func requireLoadedFeed() throws(BoardError) {
        guard feed.isLoaded else {
            throw BoardError(.unavailable, "the feed is not loaded yet (the database is not reachable); retry")
        }
    }

    /// A page of NEARBY, handed to `body` as borrowed records while the feed cannot change: for
    /// writing a reply without copying pins. `UNAVAILABLE` until the feed is loaded.
    public func withNearby<Result>(_ query: NearbyQuery, _ body: (NearbyRecords) -> Result) throws(BoardError) -> Result {
        try checks.circle(lat: query.lat, lon: query.lon, radius: query.radius)
        try requireLoadedFeed()
        do {
            return try feed.withNearby(query, body)
        } catch {
            throw Self.feedError(error, query: "NEARBY")
        }
    }

    /// A page of REGION, handed to `body` as borrowed records while the feed cannot change; nil
    /// when no such region is defined.
    public func withRegionPage<Result>(
        named name: String, limit: Int, kind: PinKind?, after cursor: RegionCursor?, _ body: (RegionRecords) -> Result
    ) throws(BoardError) -> Result? {
        try requireLoadedFeed()
        do {
            return try feed.withRegionPage(named: name, limit: limit, kind: kind, after: cursor, body)
        } catch {
            throw Self.feedError(error, query: "REGION")
        }
    }

    /// A refused feed query: a cursor made by another query, or a value the index cannot take.
    private static func feedError(_ error: PinIndexError, query: String) -> BoardError {
        switch error {
        case .cursorMismatch: BoardError(.badArgument, "CURSOR belongs to a different \(query) query")
        default: BoardError(.badArgument, error.description)
        }
    }

    /// Every defined region with its number of live pins.
    public func regionCounts() throws(BoardError) -> [(name: String, pins: Int)] {
        try requireLoadedFeed()
        return feed.regionCounts()
    }
}
