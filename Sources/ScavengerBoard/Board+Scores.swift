import ScavengerCore
import ScavengerFeed
import ScavengerStore

extension Board {
    /// The most entries a RANKING page holds.
    public static let rankingPageLimits = 1 ... 200

    /// RANKING: a page of the ranking of all users by their points across every hunt, all-time,
    /// this week's or last week's by `now` (UTC; the board's clock unless given), after a cursor,
    /// or the page around the caller (`around`; the first page for a caller without points or
    /// without a login). Read from memory: kept by the change log on every daemon, with this
    /// daemon's own writes applied before their replies. Loads the rankings first when nothing
    /// has yet.
    public func ranking(
        _ period: RankingPeriod, limit: Int, cursor: String?, around: Bool, viewer session: Session, now: Timestamp? = nil
    ) async throws(BoardError) -> (entries: [LeaderboardEntry], next: String?) {
        let now = now ?? clock.now
        if let page = try rankingFromMemory(period, limit: limit, cursor: cursor, around: around, viewer: session, now: now) {
            return page
        }
        try await requireRankings()
        guard let page = try rankingFromMemory(period, limit: limit, cursor: cursor, around: around, viewer: session, now: now) else {
            throw feed.hunts.isLoading ? Self.rankingsLoading : Self.rankingsUnreachable
        }
        return page
    }

    /// ``ranking(_:limit:cursor:around:viewer:now:)`` answered at once, without suspending; nil
    /// when the rankings are not loaded yet. Bad arguments are refused either way.
    public func rankingFromMemory(
        _ period: RankingPeriod, limit: Int, cursor: String?, around: Bool, viewer session: Session, now: Timestamp? = nil
    ) throws(BoardError) -> (entries: [LeaderboardEntry], next: String?)? {
        let now = now ?? clock.now
        try RequestChecks.whole(limit, "LIMIT", in: Self.rankingPageLimits)
        if around, cursor != nil { throw BoardError(.badArgument, "AROUND and CURSOR cannot be combined") }
        let board = period.board(at: now)
        var after: LeaderboardPosition?
        if let cursor {
            guard let parsed = LeaderboardCursor(encoded: cursor), parsed.belongs(to: board.scope) else {
                throw BoardError(.badArgument, period == .allTime
                    ? "CURSOR is not a cursor of the all-time ranking"
                    : "CURSOR is not a cursor of that week's ranking (weeks turn at Monday 00:00 UTC)")
            }
            after = parsed.position
        }
        let user = around ? session.user?.name : nil
        let page = feed.hunts.withRankings { rankings in
            if let user {
                rankings.page(board, around: user, limit: limit)
            } else {
                rankings.page(board, after: after, limit: limit)
            }
        }
        return page.map { ($0.entries, $0.next.map { LeaderboardCursor(scope: board.scope, position: $0).encoded }) }
    }

    /// PROFILE: `username`'s totals (the caller's when nil; a login is needed then) and all-time
    /// rank. From memory (the rankings hold every user with totals, kept by the change log); a
    /// user with none is looked up in the database (zeros, or `NOT_FOUND`).
    /// Its `badges` are counted in the database (they are not kept in memory).
    public func profile(username: String?, viewer session: Session) async throws(BoardError) -> UserProfile {
        var profile = try await profileWithoutBadges(username: username, viewer: session)
        let user = profile.user.name
        profile.badges = try await guarded("counting badges") { try await store.badgeCount(username: user) ?? 0 }
        return profile
    }

    /// ``profile(username:viewer:)`` with no badges counted.
    private func profileWithoutBadges(username: String?, viewer session: Session) async throws(BoardError) -> UserProfile {
        if let profile = try profileFromMemory(username: username, viewer: session) { return profile }
        let name = try profileName(username, session)
        try await requireRankings()
        if let profile = feed.hunts.withRankings({ $0.profile(named: name) }) ?? nil { return profile }
        return try await guarded {
            guard var profile = try await store.profile(username: name) else {
                throw BoardError(.notFound, "no user named \(name)")
            }
            let user = profile.user.name
            profile.rank = feed.hunts.withRankings { $0.rank(of: user, with: profile.standing, on: .allTime) } ?? nil
            return profile
        }
    }

    /// ``profile(username:viewer:)`` answered at once from memory; nil when the user has no
    /// totals there (or the rankings are not loaded yet). Bad arguments are refused either way.
    public func profileFromMemory(username: String?, viewer session: Session) throws(BoardError) -> UserProfile? {
        let name = try profileName(username, session)
        return feed.hunts.withRankings { $0.profile(named: name) } ?? nil
    }

    /// The name PROFILE asks about: the one given (checked), or the caller's.
    func profileName(_ username: String?, _ session: Session, command: String = "PROFILE") throws(BoardError) -> String {
        if let username {
            try RequestChecks.username(username)
            return username
        }
        guard let user = session.user else { throw BoardError(.unauthorized, "\(command) without a username needs a login") }
        // A guest has none: their name may be an account's.
        guard !user.isGuest else { throw BoardError(.notFound, "a guest has no \(command == "PROFILE" ? "profile" : "badges"); REGISTER to keep your points") }
        return user.name
    }

    private static let rankingsLoading = BoardError(.unavailable, "the rankings are still loading; retry")
    private static let rankingsUnreachable = BoardError(.unavailable, "the rankings are not loaded yet (the database is not reachable); retry")

    /// Loads the rankings when nothing has yet (the listener loads them at start-up); refused with
    /// `UNAVAILABLE` while they cannot be.
    private func requireRankings() async throws(BoardError) {
        guard !feed.hunts.isLoaded else { return }
        do {
            try await feed.hunts.catchUp()
        } catch {
            throw boardError(for: error, useCase: "loading the rankings")
        }
        guard feed.hunts.isLoaded else { throw feed.hunts.isLoading ? Self.rankingsLoading : Self.rankingsUnreachable }
    }
}
