/// Opaque ids for pins, replies, hunts, stops and check-ins: a kind letter and 120 random bits in lowercase base32.
/// The letters keep the two kinds apart, so an id names exactly one thing.
public enum Identifier {
    static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    /// A new pin id, `p` and 24 characters.
    public static func newPin() -> String { make(prefix: "p") }

    /// A new reply id, `r` and 24 characters.
    public static func newReply() -> String { make(prefix: "r") }

    /// A new hunt id, `h` and 24 characters.
    public static func newHunt() -> String { make(prefix: "h") }

    /// A new stop id, `s` and 24 characters.
    public static func newStop() -> String { make(prefix: "s") }

    /// A new check-in id, `c` and 24 characters.
    public static func newCheckIn() -> String { make(prefix: "c") }

    /// Whether `id` has the shape of a hunt id.
    public static func isHunt(_ id: String) -> Bool { hasShape(id, prefix: "h") }

    /// Whether `id` has the shape of a stop id.
    public static func isStop(_ id: String) -> Bool { hasShape(id, prefix: "s") }

    /// Whether `id` has the shape of a check-in id.
    public static func isCheckIn(_ id: String) -> Bool { hasShape(id, prefix: "c") }

    /// Whether `id` has the shape of a pin id (it may still not exist).
    public static func isPin(_ id: String) -> Bool { hasShape(id, prefix: "p") }

    /// Whether `id` has the shape of a reply id.
    public static func isReply(_ id: String) -> Bool { hasShape(id, prefix: "r") }

    /// Two 64-bit draws give the 120 bits: one system call each, not one per character.
    static func make(prefix: UInt8) -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        var bytes: [UInt8] = [prefix]
        bytes.reserveCapacity(25)
        for index in 0 ..< 24 {
            let bits = index < 12 ? high >> (index * 5) : low >> ((index - 12) * 5)
            bytes.append(alphabet[Int(bits & 31)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func make(prefix: Character) -> String { make(prefix: prefix.asciiValue!) }

    static func hasShape(_ id: String, prefix: Character) -> Bool {
        let bytes = Array(id.utf8)
        return bytes.count == 25 && bytes[0] == prefix.asciiValue! && bytes.dropFirst().allSatisfy(alphabet.contains)
    }
}
