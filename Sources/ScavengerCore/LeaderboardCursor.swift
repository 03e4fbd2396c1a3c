/// Where a LEADERBOARD (or RANKING) page ended: the last entry's position, and the board it
/// belongs to. The next page continues after that position even if the player has moved or
/// left since (``Leaderboard/page(after:limit:)``).
public struct LeaderboardCursor: Sendable, Equatable {
    /// The last entry's position: the next page starts after it.
    public var position: LeaderboardPosition
    /// ``scopeTag(_:)`` of the board it pages through: a cursor is good for that board only.
    public var scopeTag: UInt64

    /// The cursor after `position` on the board named `scope` (a hunt's id for its leaderboard;
    /// a fixed name for each ranking of all users).
    public init(scope: String, position: LeaderboardPosition) {
        self.init(position: position, scopeTag: Self.scopeTag(scope))
    }

    /// A cursor from its parts.
    public init(position: LeaderboardPosition, scopeTag: UInt64) {
        self.position = position
        self.scopeTag = scopeTag
    }

    /// A short fingerprint of a board's name (FNV-1a, 64 bits).
    public static func scopeTag(_ scope: String) -> UInt64 {
        FNV1a.hash(scope.utf8)
    }

    /// Whether this cursor was made for the board named `scope`.
    public func belongs(to scope: String) -> Bool {
        scopeTag == Self.scopeTag(scope)
    }

    /// The opaque, URL-safe text clients pass back:
    /// `<scope tag, 16 hex digits>_<points>_<microseconds, or n at 0 points>_<player>`.
    public var encoded: String {
        let instant = position.at.map { String($0.microseconds) } ?? "n"
        return CursorCodec.hex(scopeTag) + "_\(position.points)_\(instant)_\(position.player)"
    }

    /// Parses what ``encoded`` produced; nil for anything else: points that are not a plain
    /// whole number, an instant present at 0 points or missing above, a time no check-in can
    /// have (``Timestamp/storableMicroseconds``), a player name that breaks the username rules.
    public init?(encoded: String) {
        guard let parts = CursorCodec.fields(encoded, separator: "_", count: 4), let tag = CursorCodec.hex(parts[0]),
              let points = Self.plain(parts[1]).map({ Int($0) }),
              (try? Validation.username(String(parts[3]))) != nil
        else { return nil }
        let at: Timestamp?
        if parts[2] == "n" {
            guard points == 0 else { return nil }
            at = nil
        } else {
            guard points > 0, let micros = Self.plain(parts[2]), Timestamp(microseconds: micros).isStorable else { return nil }
            at = Timestamp(microseconds: micros)
        }
        self.init(position: LeaderboardPosition(points: points, at: at, player: String(parts[3])), scopeTag: tag)
    }

    /// A whole number as ``encoded`` writes it: no leading zero but in `0` itself.
    private static func plain(_ text: Substring) -> Int64? {
        guard text.utf8.count == 1 || text.utf8.first != UInt8(ascii: "0") else { return nil }
        return CursorCodec.decimal(text)
    }
}
