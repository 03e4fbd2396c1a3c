/// A pin id as two integers: `p` and 24 base32 characters, 60 bits in each half. Digits are
/// numbered in ASCII order (`2`…`7` before `a`…`z`), so comparing keys compares the id strings.
public struct PinKey: Hashable, Comparable, Sendable {
    package var high: UInt64
    package var low: UInt64

    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The key of a pin id, or nil when `id` is not one; reads the string's bytes in place.
    public init?(id: String) {
        var id = id
        guard let key = id.withUTF8({ Self(utf8: $0) }) else { return nil }
        self = key
    }

    /// The key of a pin id given as UTF-8 bytes, or nil when they are not one.
    public init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count == 25, bytes[0] == UInt8(ascii: "p") else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 1 ..< 25 {
            let byte = bytes[index]
            let digit: UInt64
            switch byte {
            case UInt8(ascii: "2") ... UInt8(ascii: "7"): digit = UInt64(byte &- UInt8(ascii: "2"))
            case UInt8(ascii: "a") ... UInt8(ascii: "z"): digit = UInt64(byte &- UInt8(ascii: "a") &+ 6)
            default: return nil
            }
            if index <= 12 { high = high << 5 | digit } else { low = low << 5 | digit }
        }
        self.high = high
        self.low = low
    }

    /// The key of a pin id given as any string (a substring, say), or nil when it is not one.
    public init?<S: StringProtocol>(id: S) {
        let key = id.utf8.withContiguousStorageIfAvailable { Self(utf8: $0) }
            ?? Array(id.utf8).withUnsafeBufferPointer { Self(utf8: $0) }
        guard let key else { return nil }
        self = key
    }

    package static let digits = Array("234567abcdefghijklmnopqrstuvwxyz".utf8)

    /// The id as text.
    public var string: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(25)
        append(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the id's 25 characters.
    package func append(to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "p"))
        for index in 0 ..< 12 {
            bytes.append(Self.digits[Int(high >> UInt64(55 - 5 * index) & 31)])
        }
        for index in 0 ..< 12 {
            bytes.append(Self.digits[Int(low >> UInt64(55 - 5 * index) & 31)])
        }
    }

    public static func < (lhs: PinKey, rhs: PinKey) -> Bool {
        lhs.high != rhs.high ? lhs.high < rhs.high : lhs.low < rhs.low
    }

    /// A well-spread hash (ids are random, but nothing here relies on it).
    package var hashValue64: UInt64 { FNV1a.mix(high &* 0x9E37_79B9_7F4A_7C15 ^ low) }
}
