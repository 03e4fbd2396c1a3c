internal import OrderStatistics

/// A place in a leaderboard's order: a player's points, the instant they reached them and their
/// name. `<` is "comes before": points descending, then the instant ascending, then the name in
/// byte order of its ASCII-lowercased form (`alice` < `Bob` < `carol`; `-`, `.` and the digits
/// sort before `_`, and `_` before every letter: `a-b` < `a9b` < `a_b` < `ab`), then the name's
/// own bytes (so names differing only in case still have an order: `ABC` < `Abc` < `abc`). At 0 points the instant is not
/// kept: every player at 0 points shares one rank and they are listed by name.
///
/// Player names are ASCII (the username rules); names and cursors compare by bytes.
public struct LeaderboardPosition: Sendable, Hashable, Comparable {
    /// Never negative.
    public let points: Int
    /// When the player reached ``points``; nil at 0 points.
    public let at: Timestamp?
    /// The player's name.
    public let player: String

    /// The position of `player` with `points` reached at `at` (ignored at 0 points).
    public init(points: Int, at: Timestamp?, player: String) {
        self.points = points
        self.at = points == 0 ? nil : at
        self.player = player
    }

    /// The instant as a number that sorts it: nil (0 points) first.
    private var instant: Int64 { at?.microseconds ?? .min }

    /// Whether a player here is strictly ahead of one at `other` in rank: more points, or as
    /// many reached earlier (never at 0 points, where all share the last rank).
    public func ranksAhead(of other: LeaderboardPosition) -> Bool {
        if points != other.points { return points > other.points }
        return points != 0 && instant < other.instant
    }

    /// Whether a player here shares a rank with one at `other`: equal points reached at the same
    /// instant, or both at 0 points.
    public func sharesRank(with other: LeaderboardPosition) -> Bool {
        !ranksAhead(of: other) && !other.ranksAhead(of: self)
    }

    /// Whether `lhs` comes before `rhs` on the leaderboard.
    public static func < (lhs: LeaderboardPosition, rhs: LeaderboardPosition) -> Bool {
        if lhs.ranksAhead(of: rhs) { return true }
        if rhs.ranksAhead(of: lhs) { return false }
        return nameOrder(lhs.player, rhs.player)
    }

    /// The same place: sharing a rank, with names of the same bytes.
    public static func == (lhs: LeaderboardPosition, rhs: LeaderboardPosition) -> Bool {
        lhs.sharesRank(with: rhs) && lhs.player.utf8.elementsEqual(rhs.player.utf8)
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(points)
        hasher.combine(instant)
        for byte in player.utf8 { hasher.combine(byte) }
        hasher.combine(player.utf8.count)
    }

    /// Whether name `a` comes before name `b`: by their ASCII-lowercased bytes, then by their bytes.
    static func nameOrder(_ a: String, _ b: String) -> Bool {
        var exact = 0  // the first difference of the bytes themselves: -1 a first, 1 b first
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return exact < 0
            case (nil, _): return true
            case (_, nil): return false
            case (let x?, let y?):
                let foldedX = fold(x)
                let foldedY = fold(y)
                if foldedX != foldedY { return foldedX < foldedY }
                if exact == 0, x != y { exact = x < y ? -1 : 1 }
            }
        }
    }

    private static func fold(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A") ... UInt8(ascii: "Z")).contains(byte) ? byte + 0x20 : byte
    }
}

/// A page of a leaderboard and where the next one starts.
public struct LeaderboardPage: Sendable, Equatable {
    /// The entries in order, with their ranks.
    public var entries: [LeaderboardEntry]
    /// The position of the page's last entry when more follow it (what a cursor holds); nil on
    /// the last page.
    public var next: LeaderboardPosition?

    /// A page from its parts.
    public init(entries: [LeaderboardEntry], next: LeaderboardPosition?) {
        self.entries = entries
        self.next = next
    }
}

/// One hunt's scores in order, in memory: every player with their points, the stops they found,
/// and the instant (to the microsecond) they reached those points. Order and ranks are the
/// contract's (see ``LeaderboardPosition``): competition ranks (1, 2, 2, 4), where only equal
/// points reached at the same instant share a rank, and players at 0 points share the last.
///
/// Updating a player, removing one, a player's rank and the start of any page take O(log n) in
/// the worst case (a ``CountedTree`` of positions and a dictionary of players), so it serves a
/// hunt of 10,000 players, and the ranking of a million users, alike. A page costs O(log n) plus
/// its length. The calls that report changes cost O(log n) plus the number of entries changed,
/// which can be all of them (a player passing everyone moves everyone down one rank).
///
/// A value: copying it is cheap until one copy changes. Players are named as the caller names
/// them (in a hunt, their player names); a name is kept as first given.
public struct Leaderboard: Sendable {
    /// What the leaderboard knows of one player.
    public struct Standing: Sendable, Equatable {
        /// Never negative.
        public var points: Int
        /// Stops found (accepted check-ins).
        public var found: Int
        /// When the player reached ``points``; nil at 0 points.
        public var at: Timestamp?
        /// In a time trial: microseconds from the player's first check-in to their last accepted
        /// one; nil when nothing is found (dropped then) and outside trials.
        public var trialTime: Int64? = nil
        /// A team's members (a team hunt's board, whose entries are teams); nil for a player.
        public var members: [String]? = nil

        /// A standing from its fields (`at` is dropped at 0 points, `trialTime` at 0 found).
        public init(points: Int, found: Int, at: Timestamp?, trialTime: Int64? = nil, members: [String]? = nil) {
            self.points = points
            self.found = found
            self.at = points == 0 ? nil : at
            self.trialTime = found == 0 ? nil : trialTime
            self.members = members
        }
    }

    private struct Record: Sendable {
        /// The player's name as first given (the dictionary's key may be written differently
        /// but equal as a `String`).
        var name: String
        var standing: Standing
        var isTrial: Bool

        /// Points and their instant; in a time trial, stops found and the trial time (as an
        /// instant of that many microseconds after the epoch): the trial's order is the same
        /// comparison of other numbers (found descending, time ascending, then name), and
        /// cursors hold it alike.
        var position: LeaderboardPosition { Leaderboard.position(of: name, standing, trial: isTrial) }
    }

    private var records: [String: Record] = [:]
    private var order = CountedTree<LeaderboardPosition>()

    /// Whether this is a time trial's board: ordered by stops found (descending), then by the
    /// time from the first check-in to the last accepted one (ascending), then by name.
    public let isTrial: Bool

    /// An empty leaderboard (a time trial's when `trial`).
    public init(trial: Bool = false) {
        isTrial = trial
    }

    /// How many players it holds.
    public var count: Int { records.count }

    /// Whether it holds no player.
    public var isEmpty: Bool { records.isEmpty }

    /// `player`'s standing, or nil when the player is not on it.
    public func standing(of player: String) -> Standing? { records[player]?.standing }

    /// `player`'s position in the order, or nil when the player is not on it.
    public func position(of player: String) -> LeaderboardPosition? { records[player]?.position }

    /// `player`'s competition rank, or nil when the player is not on it: one more than the
    /// number of players strictly ahead.
    public func rank(of player: String) -> Int? {
        guard let position = position(of: player) else { return nil }
        return rank(at: position)
    }

    /// The place of `player` with `standing` in a board's order (a time trial's when `trial`).
    static func position(of player: String, _ standing: Standing, trial: Bool) -> LeaderboardPosition {
        if trial {
            return LeaderboardPosition(points: standing.found, at: Timestamp(microseconds: max(0, standing.trialTime ?? 0)), player: player)
        }
        return LeaderboardPosition(points: standing.points, at: standing.at, player: player)
    }

    /// The rank `side` (a player, or a team on a team hunt's board) has after a write: its new
    /// `standing` (nil: the one it has here, or none), with `changes` (others' standings written
    /// before it, in order; the last of each counts) applied too. As ``update(_:points:found:at:trialTime:members:)``
    /// of each and then ``rank(of:)`` would answer, without changing or copying the board: the
    /// one rule of who is ahead, for a check-in's reply as for the board's pages.
    public func rank(of side: String, with standing: Standing?, after changes: [(side: String, standing: Standing)] = []) -> Int {
        let own = standing ?? self.standing(of: side) ?? Standing(points: 0, found: 0, at: nil)
        let position = Self.position(of: side, own, trial: isTrial)
        var rank = rank(at: position)
        var latest: [String: Standing] = [:]
        for change in changes where change.side != side { latest[change.side] = change.standing }
        for (other, changed) in latest {
            if let old = self.position(of: other), old.ranksAhead(of: position) { rank -= 1 }
            if Self.position(of: other, changed, trial: isTrial).ranksAhead(of: position) { rank += 1 }
        }
        return rank
    }

    /// `player`'s entry, or nil when the player is not on it.
    public func entry(of player: String) -> LeaderboardEntry? {
        guard let record = records[player] else { return nil }
        return entry(record.position, rank: rank(at: record.position))
    }

    /// Sets `player`'s points, stops found and the instant they reached those points (required
    /// above 0 points, ignored at 0), and in a time trial their trial time in microseconds
    /// (ignored at 0 found), and for a team its members, adding the player when new.
    public mutating func update(_ player: String, points: Int, found: Int, at: Timestamp?, trialTime: Int64? = nil, members: [String]? = nil) {
        precondition(points >= 0, "points are never negative")
        precondition(points == 0 || at != nil, "points above 0 need the instant they were reached")
        let standing = Standing(points: points, found: found, at: at, trialTime: isTrial ? trialTime : nil, members: members)
        if var record = records[player] {
            guard record.standing != standing else { return }
            order.remove(record.position)
            record.standing = standing
            order.insert(record.position)
            records[player] = record
        } else {
            let record = Record(name: player, standing: standing, isTrial: isTrial)
            order.insert(record.position)
            records[player] = record
        }
    }

    /// ``update(_:points:found:at:trialTime:)``, returning every entry that changed, in order:
    /// the player's own when anything in it changed (or it is new), and every other player's
    /// whose rank changed (their points did not).
    public mutating func updateReportingChanges(
        _ player: String, points: Int, found: Int, at: Timestamp?, trialTime: Int64? = nil, members: [String]? = nil
    ) -> [LeaderboardEntry] {
        let before = records[player]
        let oldRank = before.map { rank(at: $0.position) }
        update(player, points: points, found: found, at: at, trialTime: trialTime, members: members)
        guard let after = records[player] else { return [] }
        let new = after.position
        let newRank = rank(at: new)
        let ownChanged = before?.standing != after.standing || oldRank != newRank
        // The others whose rank changed are those the player passed or fell behind: strictly
        // behind the player on one side of the change and not on the other.
        let others: Range<Int>
        switch before.map(\.position) {
        case nil:
            others = throughCount(new) ..< count
        case let old? where new.ranksAhead(of: old):
            others = throughCount(new) ..< throughCount(old)
        case let old? where old.ranksAhead(of: new):
            others = throughCount(old) ..< throughCount(new)  // the player is in it
        case _?:
            others = 0 ..< 0
        }
        var changed: [LeaderboardEntry] = []
        let ownInRange = !others.isEmpty && others.contains(order.index(of: new)!)
        if ownChanged, !ownInRange {
            changed.append(entry(new, rank: newRank))
        }
        for entry in entries(in: others) where ownChanged || entry.player != after.name {
            changed.append(entry)
        }
        return changed
    }

    /// Takes `player` off; false when the player was not on it.
    @discardableResult
    public mutating func remove(_ player: String) -> Bool {
        guard let record = records.removeValue(forKey: player) else { return false }
        order.remove(record.position)
        return true
    }

    /// ``remove(_:)``, returning the entries whose rank changed (every player that was strictly
    /// behind the removed one), in order.
    public mutating func removeReportingChanges(_ player: String) -> [LeaderboardEntry] {
        guard let record = records[player] else { return [] }
        remove(player)
        return entries(in: throughCount(record.position) ..< count)
    }

    /// Gives `player` the name `newName`, keeping their standing (a rename moves them among
    /// players tied with them only, so no rank changes). False, changing nothing, when `player`
    /// is not on it or `newName` is.
    @discardableResult
    public mutating func rename(_ player: String, to newName: String) -> Bool {
        guard let record = records[player], records[newName] == nil else { return false }
        remove(player)
        update(
            newName, points: record.standing.points, found: record.standing.found, at: record.standing.at,
            trialTime: record.standing.trialTime, members: record.standing.members)
        return true
    }

    /// Up to `limit` (at least 1) entries from the first after `position` (the `next` of the
    /// page before; nil for the first page). The position need not be anyone's now: the page
    /// continues from where it would be, so following `next` to the end lists every player who
    /// stayed put exactly once.
    public func page(after position: LeaderboardPosition?, limit: Int) -> LeaderboardPage {
        let start = position.map { position in order.prefixCount(while: { $0 <= position }) } ?? 0
        return page(from: start, limit: limit)
    }

    /// The page that holds `player`'s entry, with up to `limit / 2` entries above it (`AROUND`);
    /// the first page when `player` is not on it.
    public func page(around player: String, limit: Int) -> LeaderboardPage {
        guard let position = position(of: player), let index = order.index(of: position) else {
            return page(after: nil, limit: limit)
        }
        return page(from: max(0, index - limit / 2), limit: limit)
    }

    /// Up to `limit` (at least 1) entries from index `start`.
    func page(from start: Int, limit: Int) -> LeaderboardPage {
        precondition(limit >= 1, "a page holds at least one entry")
        let end = start + min(limit, max(0, count - start))
        let entries = entries(in: start ..< end)
        guard end < count, let last = entries.last, let record = records[last.player] else {
            return LeaderboardPage(entries: entries, next: nil)
        }
        return LeaderboardPage(entries: entries, next: record.position)
    }

    /// The entries at the indices of `range`, with their ranks.
    private func entries(in range: Range<Int>) -> [LeaderboardEntry] {
        guard !range.isEmpty else { return [] }
        var entries: [LeaderboardEntry] = []
        entries.reserveCapacity(range.count)
        var previous: LeaderboardPosition?
        var rank = 0
        var index = range.lowerBound
        for position in order.elements(from: range.lowerBound) {
            guard index < range.upperBound else { break }
            if let previous, previous.sharesRank(with: position) {
                // The same rank as the entry before.
            } else {
                rank = previous == nil ? self.rank(at: position) : index + 1
            }
            entries.append(entry(position, rank: rank))
            previous = position
            index += 1
        }
        return entries
    }

    private func entry(_ position: LeaderboardPosition, rank: Int) -> LeaderboardEntry {
        let standing = records[position.player]?.standing ?? Standing(points: 0, found: 0, at: nil)
        return LeaderboardEntry(
            rank: rank, player: position.player, points: standing.points, found: standing.found, at: standing.at, isTrial: isTrial,
            trialSeconds: standing.trialTime.map { Double($0) / 1_000_000 }, members: standing.members)
    }

    /// The rank of a player at `position`, whether or not the board has them there: one more
    /// than the other players strictly ahead of it (the player it names never counts against
    /// themselves, wherever the board has them).
    public func rank(at position: LeaderboardPosition) -> Int {
        var ahead = order.prefixCount(while: { $0.ranksAhead(of: position) })
        if let own = records[position.player]?.position, own.ranksAhead(of: position) { ahead -= 1 }
        return ahead + 1
    }

    /// How many players are ahead of or share a rank with a player at `position`.
    private func throughCount(_ position: LeaderboardPosition) -> Int {
        order.prefixCount(while: { !position.ranksAhead(of: $0) })
    }
}
