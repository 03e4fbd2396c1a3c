/// A hunt's join code: 6 characters from `A-Z 2-9` without `I O 0 1` (32 symbols, none two that
/// read alike, 30 bits). Always held in upper case: what a player types is matched
/// case-insensitively by normalizing it (``init(typed:)``). Unique among hunts that have not
/// ended, which the store enforces; this type only makes and reads codes.
public struct JoinCode: Sendable, Hashable, CustomStringConvertible, Codable {
    /// The code, 6 characters of ``alphabet``.
    public let text: String

    /// The 32 symbols in ASCII order: `2-9`, then `A-Z` without `I` and `O`.
    public static let alphabet: [UInt8] = Array("23456789ABCDEFGHJKLMNPQRSTUVWXYZ".utf8)

    /// A code's length.
    public static let length = 6

    /// The code a player typed, in any case; nil when it is not 6 symbols of ``alphabet`` (once
    /// upper-cased). Only ASCII letters change case: nothing else becomes a symbol.
    public init?(typed: String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.length)
        for byte in typed.utf8 {
            guard bytes.count < Self.length else { return nil }
            let upper = (UInt8(ascii: "a") ... UInt8(ascii: "z")).contains(byte) ? byte - 0x20 : byte
            guard Self.isSymbol(upper) else { return nil }
            bytes.append(upper)
        }
        guard bytes.count == Self.length else { return nil }
        text = String(decoding: bytes, as: UTF8.self)
    }

    /// A new code, each symbol drawn uniformly from `generator` (the system's in production, a
    /// seeded one in tests).
    public static func random(using generator: inout some RandomNumberGenerator) -> JoinCode {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        for _ in 0 ..< length {
            bytes.append(alphabet[Int(generator.next(upperBound: UInt8(alphabet.count)))])
        }
        return JoinCode(symbols: bytes)
    }

    /// A new code from the system's random numbers.
    public static func random() -> JoinCode {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// Refuses what cannot be a join code, with the rule in the message.
    public static func validate(_ typed: String) throws(ValidationError) {
        guard JoinCode(typed: typed) != nil else {
            throw ValidationError("a join code is 6 of A-Z and 2-9 without I, O, 0 and 1 (in any case)")
        }
    }

    /// Whether `byte` is one of the 32 symbols (upper case).
    static func isSymbol(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "2") ... UInt8(ascii: "9"): return true
        case UInt8(ascii: "A") ... UInt8(ascii: "Z"): return byte != UInt8(ascii: "I") && byte != UInt8(ascii: "O")
        default: return false
        }
    }

    private init(symbols: [UInt8]) {
        text = String(decoding: symbols, as: UTF8.self)
    }

    /// The code (``text``).
    public var description: String { text }
}
