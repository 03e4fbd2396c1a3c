
/// Where a NEARBY page ended: the last pin's distance and id, and the query it belongs to.
public struct NearbyCursor: Sendable, Equatable {
    /// The last returned pin's canonical distance (kept bit for bit).
    public var distance: Double
    /// The last returned pin's id.
    public var id: String
    /// ``NearbyQuery/fingerprint`` of the query that made it.
    public var fingerprint: UInt64

    /// A cursor from its parts.
    public init(distance: Double, id: String, fingerprint: UInt64) {
        self.distance = distance
        self.id = id
        self.fingerprint = fingerprint
    }

    /// Opaque and URL-safe: `<fingerprint>.<distance bits>.<id>`, hex fields.
    public var encoded: String { CursorText.encode(fingerprint, distance.bitPattern, id) }

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
    /// The last returned pin's creation time.
    public var created: Timestamp
    /// The last returned pin's id.
    public var id: String
    /// ``fingerprint(region:kind:)`` of the query that made it.
    public var fingerprint: UInt64

    /// A cursor from its parts.
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
    public var encoded: String { CursorText.encode(fingerprint, UInt64(bitPattern: created.microseconds), id) }

    /// Parses ``encoded``; nil for anything malformed. Any time is accepted: REGION pages are
    /// read from memory, where an extreme time is only a page before or after every pin.
    public init?(encoded: String) {
        guard let (fingerprint, bits, id) = CursorText.parse(encoded) else { return nil }
        self.init(created: Timestamp(microseconds: Int64(bitPattern: bits)), id: id, fingerprint: fingerprint)
    }
}

/// The one codec of the protocol's opaque cursors (NEARBY, REGION, REPLIES, LEADERBOARD and
/// RANKING, HUNTS, REVIEW): fields joined by a separator, 64-bit values as exactly 16 lowercase
/// hex digits, whole numbers as plain ASCII digits. Each cursor type names its fields; this is
/// where they are written and read.
public enum CursorCodec {
    /// Appends `value` as 16 lowercase hex digits (the NEARBY hot path writes into bytes).
    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for index in 0 ..< 16 {
            let digit = UInt8(truncatingIfNeeded: value >> UInt64(60 - 4 * index)) & 0xF
            bytes.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
        }
    }

    /// `value` as 16 lowercase hex digits.
    public static func hex(_ value: UInt64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        append(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The value of exactly 16 lowercase hex digits; nil for anything else.
    public static func hex(_ text: Substring) -> UInt64? {
        let bytes = text.utf8
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

    /// The value of 1 to 19 ASCII digits with no sign (as ``String(_:)`` of an `Int64` writes a
    /// number that is not negative); nil for anything else.
    public static func decimal(_ text: Substring) -> Int64? {
        let bytes = text.utf8
        guard (1 ... 19).contains(bytes.count), bytes.allSatisfy({ (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        return Int64(text)
    }

    /// The `count` fields of `text` split at `separator`; the last keeps any separators after it
    /// (a player's name may hold one). Nil when there are fewer.
    public static func fields(_ text: some StringProtocol, separator: Character, count: Int) -> [Substring]? {
        let parts = Substring(text).split(separator: separator, maxSplits: count - 1, omittingEmptySubsequences: false)
        return parts.count == count ? parts : nil
    }
}

enum CursorText {
    /// `<16 hex>.<16 hex>.<pin id>`.
    static func encode(_ first: UInt64, _ second: UInt64, _ id: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(34 + id.utf8.count)
        CursorCodec.append(first, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        CursorCodec.append(second, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        bytes.append(contentsOf: id.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `<16 hex>.<16 hex>.<pin id>`.
    static func parse(_ text: String) -> (UInt64, UInt64, String)? {
        guard let parts = CursorCodec.fields(text, separator: ".", count: 3),
              let first = CursorCodec.hex(parts[0]), let second = CursorCodec.hex(parts[1]), PinKey(id: parts[2]) != nil
        else { return nil }
        return (first, second, String(parts[2]))
    }
}
