import ScavengerCore
import ScavengerPinIndex

extension Board {
    /// A page of NEARBY, handed to `body` as borrowed records while the feed cannot change: for
    /// writing a reply without copying pins.
    public func withNearby<Result>(_ query: NearbyQuery, _ body: (NearbyRecords) -> Result) throws(PinIndexError) -> Result {
        try feed.withNearby(query, body)
    }

    /// A page of REGION, handed to `body` as borrowed records while the feed cannot change; nil
    /// when no such region is defined.
    public func withRegionPage<Result>(
        named name: String, limit: Int, kind: PinKind?, after cursor: RegionCursor?, _ body: (RegionRecords) -> Result
    ) throws(PinIndexError) -> Result? {
        try feed.withRegionPage(named: name, limit: limit, kind: kind, after: cursor, body)
    }

    /// Every defined region with its number of live pins.
    public func regionCounts() -> [(name: String, pins: Int)] {
        feed.regionCounts()
    }
}
