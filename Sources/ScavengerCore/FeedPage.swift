
/// A pin as the index holds it, borrowed: its text is a slice of the index's storage and its
/// names are the index's interned strings, so nothing is copied. Valid only while the index
/// is not being changed (under the feed's read lock); ``Pin/init(_:)`` makes a lasting copy.
public struct PinRecord: PinFields {
    package let key: PinKey
    public let lat: Double
    public let lon: Double
    public let kind: PinKind
    public let textUTF8: ArraySlice<UInt8>
    public let author: String
    public let created: Timestamp
    public let expires: Timestamp
    public let region: String?
    public let photo: PhotoInfo?
    public let replies: Int

    /// A record from the index's storage (only the pin index makes them).
    package init(
        key: PinKey, lat: Double, lon: Double, kind: PinKind, textUTF8: ArraySlice<UInt8>, author: String,
        created: Timestamp, expires: Timestamp, region: String?, photo: PhotoInfo?, replies: Int
    ) {
        self.key = key
        self.lat = lat
        self.lon = lon
        self.kind = kind
        self.textUTF8 = textUTF8
        self.author = author
        self.created = created
        self.expires = expires
        self.region = region
        self.photo = photo
        self.replies = replies
    }

    public func appendID(to bytes: inout [UInt8]) {
        key.append(to: &bytes)
    }
}

extension Pin {
    /// A lasting copy of a borrowed record.
    public init(_ record: PinRecord) {
        self.init(
            id: record.key.string, lat: record.lat, lon: record.lon, kind: record.kind,
            text: String(decoding: record.textUTF8, as: UTF8.self), author: record.author, created: record.created,
            expires: record.expires, region: record.region, photo: record.photo, replies: record.replies)
    }
}

/// One page of a feed, and where the next one starts (nil on the last page).
public struct FeedPage<Item, Cursor> {
    /// The items, in feed order.
    public var pins: [Item]
    /// Set when more pins follow; nil on the last page.
    public var next: Cursor?

    /// A page and where the next one starts.
    public init(pins: [Item], next: Cursor?) {
        self.pins = pins
        self.next = next
    }

    /// The same page with each item transformed.
    public func map<Other>(_ transform: (Item) throws -> Other) rethrows -> FeedPage<Other, Cursor> {
        FeedPage<Other, Cursor>(pins: try pins.map(transform), next: next)
    }
}

extension FeedPage: Sendable where Item: Sendable, Cursor: Sendable {}
extension FeedPage: Equatable where Item: Equatable, Cursor: Equatable {}

/// A page of NEARBY, nearest first, each pin with its distance in metres.
public typealias NearbyPage = FeedPage<(pin: Pin, distance: Double), NearbyCursor>
/// A page of NEARBY as borrowed records (see ``PinRecord``).
public typealias NearbyRecords = FeedPage<(record: PinRecord, distance: Double), NearbyCursor>
/// A page of REGION, newest first.
public typealias RegionPage = FeedPage<Pin, RegionCursor>
/// A page of REGION as borrowed records (see ``PinRecord``).
public typealias RegionRecords = FeedPage<PinRecord, RegionCursor>
