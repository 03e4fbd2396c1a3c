import ScavengerCore
import ScavengerStore

/// The opaque cursors of the hunts' lists (HUNTS, HUNTS MINE, REVIEW): the sort key of the last
/// row shown, `<16 hex>.<16 hex>.<id>`, with a letter in front naming the list, so a cursor of
/// one list is refused by another.
enum HuntCursors {
    private static func encode(_ list: String, _ first: UInt64, _ second: UInt64, _ id: String) -> String {
        "\(list)\(CursorCodec.hex(first)).\(CursorCodec.hex(second)).\(id)"
    }

    private static func parse(_ list: String, _ text: String, id shape: (String) -> Bool) -> (UInt64, UInt64, String)? {
        guard text.hasPrefix(list), let parts = CursorCodec.fields(text.dropFirst(list.count), separator: ".", count: 3),
              let first = CursorCodec.hex(parts[0]), let second = CursorCodec.hex(parts[1]), shape(String(parts[2]))
        else { return nil }
        return (first, second, String(parts[2]))
    }

    /// HUNTS: `l` (by state and start) or `n` (NEAR, by distance).
    static func list(_ key: HuntListCursor, near: Bool) -> String {
        near
            ? encode("n", 0, key.distance.bitPattern, key.id)
            : encode("l", UInt64(key.group), UInt64(bitPattern: key.starts), key.id)
    }

    static func list(_ text: String, near: Bool) -> HuntListCursor? {
        guard let (first, second, id) = parse(near ? "n" : "l", text, id: Identifier.isHunt) else { return nil }
        if near {
            let distance = Double(bitPattern: second)
            guard first == 0, distance.isFinite, distance >= 0 else { return nil }
            return HuntListCursor(group: 0, starts: 0, distance: distance, id: id)
        }
        guard first <= 2 else { return nil }
        return HuntListCursor(group: Int(first), starts: Int64(bitPattern: second), distance: 0, id: id)
    }

    /// HUNTS MINE: `m`, by creation time.
    static func mine(created: Timestamp, id: String) -> String {
        encode("m", 0, UInt64(bitPattern: created.microseconds), id)
    }

    static func mine(_ text: String) -> (created: Timestamp, id: String)? {
        guard let (first, second, id) = parse("m", text, id: Identifier.isHunt), first == 0 else { return nil }
        let created = Timestamp(microseconds: Int64(bitPattern: second))
        guard created.isStorable else { return nil }
        return (created, id)
    }

    /// REVIEW: `r`, by check-in time.
    static func review(at: Timestamp, id: String) -> String {
        encode("r", 0, UInt64(bitPattern: at.microseconds), id)
    }

    static func review(_ text: String) -> (at: Timestamp, id: String)? {
        guard let (first, second, id) = parse("r", text, id: Identifier.isCheckIn), first == 0 else { return nil }
        let at = Timestamp(microseconds: Int64(bitPattern: second))
        guard at.isStorable else { return nil }
        return (at, id)
    }
}
