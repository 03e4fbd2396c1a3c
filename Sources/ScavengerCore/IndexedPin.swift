/// A pin as the index keeps it: what clients see, plus whether moderation hides it. The pin's
/// fields read through (`indexed.id`, `indexed.lat`, …).
@dynamicMemberLookup
public struct IndexedPin: Sendable, Equatable {
    /// The pin as clients see it.
    public var pin: Pin
    /// Hidden by reports or moderation: kept, but in no feed.
    public var hidden: Bool

    /// A pin from its fields.
    public init(
        id: String, lat: Double, lon: Double, kind: PinKind, text: String, author: String, created: Timestamp,
        expires: Timestamp, region: String? = nil, photo: PhotoInfo? = nil, replies: Int = 0, hidden: Bool = false
    ) {
        self.pin = Pin(
            id: id, lat: lat, lon: lon, kind: kind, text: text, author: author, created: created, expires: expires,
            region: region, photo: photo, replies: replies)
        self.hidden = hidden
    }

    /// A client-visible pin with its moderation state.
    public init(_ pin: Pin, hidden: Bool = false) {
        self.pin = pin
        self.hidden = hidden
    }

    /// The pin's fields, read and written through.
    public subscript<Value>(dynamicMember field: WritableKeyPath<Pin, Value>) -> Value {
        get { pin[keyPath: field] }
        set { pin[keyPath: field] = newValue }
    }
}
