import ScavengerCore

/// Why a ``PinIndex`` call was refused. Nothing changed.
public enum PinIndexError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a pin id (`p` and 24 of `a-z 2-7`).
    case invalidID(String)
    /// A latitude outside [−90, 90], a longitude outside [−180, 180], or a non-finite value.
    case invalidCoordinates
    /// A query value out of range; the text says which.
    case invalidQuery(String)
    /// The cursor was made by a different query (another centre, radius, region or kind).
    case cursorMismatch

    public var description: String {
        switch self {
        case .invalidID: "not a pin id"
        case .invalidCoordinates: "latitude must be in [-90, 90] and longitude in [-180, 180]"
        case let .invalidQuery(message): message
        case .cursorMismatch: "cursor belongs to a different query"
        }
    }
}

/// A NEARBY request: the live, visible pins within `radius` metres, nearest first, ties by id.
public struct NearbyQuery: Sendable, Equatable {
    public var lat: Double
    public var lon: Double
    /// Metres, > 0.
    public var radius: Double
    /// Page size, ≥ 1 (the protocol allows 1…200).
    public var limit: Int
    /// Only pins of this kind; nil for both.
    public var kind: PinKind?
    /// Continue after this cursor (from the previous page of the same query).
    public var after: NearbyCursor?

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

/// One page of NEARBY: pins with their canonical distance in metres, and where to continue.
/// A pin as the index holds it, borrowed: its text is a slice of the index's storage and its
/// names are the index's interned strings, so nothing is copied. Valid only while the index
/// is not being changed (under the feed's read lock); ``Pin/init(_:)`` makes a lasting copy.
public struct PinRecord: PinFields {
    let key: PinKey
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
    public var pins: [Item]
    /// Set when more pins follow; nil on the last page.
    public var next: Cursor?

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

/// Where a NEARBY page ended: the last pin's distance and id, and the query it belongs to.
public struct NearbyCursor: Sendable, Equatable {
    /// The last returned pin's canonical distance (kept bit for bit).
    public var distance: Double
    /// The last returned pin's id.
    public var id: String
    /// ``NearbyQuery/fingerprint`` of the query that made it.
    public var fingerprint: UInt64

    public init(distance: Double, id: String, fingerprint: UInt64) {
        self.distance = distance
        self.id = id
        self.fingerprint = fingerprint
    }

    /// Opaque and URL-safe: `<fingerprint>.<distance bits>.<id>`, hex fields.
    public var encoded: String {
        "\(Hex.encode(fingerprint)).\(Hex.encode(distance.bitPattern)).\(id)"
    }

    /// Parses ``encoded``; nil for anything malformed.
    public init?(encoded: String) {
        guard let (fingerprint, bits, id) = CursorText.parse(encoded) else { return nil }
        let distance = Double(bitPattern: bits)
        guard distance.isFinite, distance >= 0 else { return nil }
        self.init(distance: distance, id: id, fingerprint: fingerprint)
    }
}

/// Where a REGION page ended: the last pin's creation time and id, and the query it belongs to.
public struct RegionCursor: Sendable, Equatable {
    public var created: Timestamp
    public var id: String
    /// ``fingerprint(region:kind:)`` of the query that made it.
    public var fingerprint: UInt64

    public init(created: Timestamp, id: String, fingerprint: UInt64) {
        self.created = created
        self.id = id
        self.fingerprint = fingerprint
    }

    /// Identifies a REGION query apart from its page.
    public static func fingerprint(region: String, kind: PinKind?) -> UInt64 {
        var hash = Fingerprint()
        hash.add(byte: 0x52)  // "R"
        for byte in region.utf8 { hash.add(byte: byte) }
        hash.add(kind: kind)
        return hash.value
    }

    /// Opaque and URL-safe: `<fingerprint>.<created>.<id>`, hex fields.
    public var encoded: String {
        "\(Hex.encode(fingerprint)).\(Hex.encode(UInt64(bitPattern: created.microseconds))).\(id)"
    }

    /// Parses ``encoded``; nil for anything malformed.
    public init?(encoded: String) {
        guard let (fingerprint, bits, id) = CursorText.parse(encoded) else { return nil }
        self.init(created: Timestamp(microseconds: Int64(bitPattern: bits)), id: id, fingerprint: fingerprint)
    }
}

/// FNV-1a over bytes, finished with a SplitMix64 mix: stable across processes and machines
/// (unlike `Hasher`), so cursors survive restarts and work on every server.
struct Fingerprint {
    var value: UInt64 = 0xCBF2_9CE4_8422_2325

    mutating func add(byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }

    mutating func add(number: Double) {
        let bits = (number + 0).bitPattern  // -0 and 0 are the same query
        for shift in stride(from: 0, to: 64, by: 8) { add(byte: UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    mutating func add(kind: PinKind?) {
        switch kind {
        case nil: add(byte: 0)
        case .text: add(byte: 1)
        case .photo: add(byte: 2)
        }
        value = Self.mix(value)
    }

    static func mix(_ input: UInt64) -> UInt64 {
        var z = input &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum Hex {
    static let digits = Array("0123456789abcdef".utf8)

    /// 16 lowercase hex digits.
    static func encode(_ value: UInt64) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0 ..< 16 {
            bytes[index] = digits[Int(value >> UInt64(60 - 4 * index) & 0xF)]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Exactly 16 lowercase hex digits.
    static func decode(_ bytes: Substring.UTF8View) -> UInt64? {
        guard bytes.count == 16 else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a") ... UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }
}

enum CursorText {
    /// `<16 hex>.<16 hex>.<pin id>`.
    static func parse(_ text: String) -> (UInt64, UInt64, String)? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let first = Hex.decode(parts[0].utf8), let second = Hex.decode(parts[1].utf8),
              PinKey(id: parts[2]) != nil
        else { return nil }
        return (first, second, String(parts[2]))
    }
}

/// A pin id as two integers: `p` and 24 base32 characters, 60 bits in each half. Digits are
/// numbered in ASCII order (`2`…`7` before `a`…`z`), so comparing keys compares the id strings.
struct PinKey: Hashable, Comparable {
    var high: UInt64
    var low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    init?<S: StringProtocol>(id: S) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var index = 0
        for byte in id.utf8 {
            if index == 0 {
                guard byte == UInt8(ascii: "p") else { return nil }
            } else {
                guard index <= 24 else { return nil }
                let digit: UInt64
                switch byte {
                case UInt8(ascii: "2") ... UInt8(ascii: "7"): digit = UInt64(byte - UInt8(ascii: "2"))
                case UInt8(ascii: "a") ... UInt8(ascii: "z"): digit = UInt64(byte - UInt8(ascii: "a") + 6)
                default: return nil
                }
                if index <= 12 { high = high << 5 | digit } else { low = low << 5 | digit }
            }
            index += 1
        }
        guard index == 25 else { return nil }
        self.high = high
        self.low = low
    }

    static let digits = Array("234567abcdefghijklmnopqrstuvwxyz".utf8)

    var string: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(25)
        append(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the id's 25 characters.
    func append(to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "p"))
        for index in 0 ..< 12 {
            bytes.append(Self.digits[Int(high >> UInt64(55 - 5 * index) & 31)])
        }
        for index in 0 ..< 12 {
            bytes.append(Self.digits[Int(low >> UInt64(55 - 5 * index) & 31)])
        }
    }

    static func < (lhs: PinKey, rhs: PinKey) -> Bool {
        lhs.high != rhs.high ? lhs.high < rhs.high : lhs.low < rhs.low
    }

    /// A well-spread hash (ids are random, but nothing here relies on it).
    var hashValue64: UInt64 { Fingerprint.mix(high &* 0x9E37_79B9_7F4A_7C15 ^ low) }
}
