
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

enum Hex {
    /// Appends 16 lowercase hex digits.
    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for index in 0 ..< 16 {
            let digit = UInt8(truncatingIfNeeded: value >> UInt64(60 - 4 * index)) & 0xF
            bytes.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
        }
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
    static func encode(_ first: UInt64, _ second: UInt64, _ id: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(34 + id.utf8.count)
        Hex.append(first, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        Hex.append(second, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        bytes.append(contentsOf: id.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `<16 hex>.<16 hex>.<pin id>`.
    static func parse(_ text: String) -> (UInt64, UInt64, String)? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let first = Hex.decode(parts[0].utf8), let second = Hex.decode(parts[1].utf8),
              PinKey(id: parts[2]) != nil
        else { return nil }
        return (first, second, String(parts[2]))
    }
}
