
/// A NEARBY request: the live, visible pins within `radius` metres, nearest first, ties by id.
public struct NearbyQuery: Sendable, Equatable {
    /// The centre's latitude, in degrees.
    public var lat: Double
    /// The centre's longitude, in degrees.
    public var lon: Double
    /// Metres, > 0.
    public var radius: Double
    /// Page size, ≥ 1 (the protocol allows 1…200).
    public var limit: Int
    /// Only pins of this kind; nil for both.
    public var kind: PinKind?
    /// Continue after this cursor (from the previous page of the same query).
    public var after: NearbyCursor?

    /// A first page unless `after` is given.
    public init(lat: Double, lon: Double, radius: Double, limit: Int = 50, kind: PinKind? = nil, after: NearbyCursor? = nil) {
        self.lat = lat
        self.lon = lon
        self.radius = radius
        self.limit = limit
        self.kind = kind
        self.after = after
    }

    /// Identifies the query apart from its page (limit and cursor): a cursor carries it.
    public var fingerprint: UInt64 {
        var hash = Fingerprint()
        hash.add(byte: 0x4E)  // "N"
        hash.add(number: lat)
        hash.add(number: lon)
        hash.add(number: radius)
        hash.add(kind: kind)
        return hash.value
    }
}
