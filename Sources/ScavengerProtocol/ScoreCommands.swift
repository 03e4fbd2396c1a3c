import ScavengerBoard
import ScavengerCore

extension JSON {
    /// A PROFILE reply's object.
    public static func profile(_ profile: UserProfile) -> JSON {
        .object([
            ("user", .user(profile.user)), ("points", .int(profile.standing.points)), ("stops_found", .int(profile.standing.found)),
            ("hunts_played", .int(profile.huntsPlayed)), ("hunts_completed", .int(profile.huntsCompleted)),
            ("rank", profile.rank.map { .int($0) } ?? .null), ("badges", .int(profile.badges)),
        ])
    }

    /// A badge as BADGES and a `badge` watch event show it.
    public static func badge(_ badge: Badge) -> JSON {
        .object([
            ("id", .string(badge.id)), ("name", .string(badge.name)), ("description", .string(badge.description)),
            ("hunt", .optional(badge.hunt)), ("at", .string(badge.at.rfc3339)),
        ])
    }
}

/// RANKING, PROFILE: scores across every hunt.
enum ScoreCommands {
    struct Ranking: Sendable {
        var period: RankingPeriod
        var limit: Int
        var cursor: String?
        var around: Bool
    }

    /// RANKING's reply.
    static func rankingReply(_ page: (entries: [LeaderboardEntry], next: String?)) -> CommandOutcome {
        CommandOutcome(.ok(["entries": .array(page.entries.map(JSON.entry)), "next": .optional(page.next)]))
    }

    static let all: [CommandSpec] = [
        CommandSpec(
            "RANKING", arity: 0 ... 6, syntax: "RANKING [WEEK|LASTWEEK] [LIMIT n] [CURSOR c] [AROUND]",
            summary: "Every user with points, by points across all hunts; WEEK: this week's (from Monday 00:00 UTC), LASTWEEK: the week before; AROUND: the page with your entry.",
            parse: { arguments -> Ranking in
                let options = try arguments.options(["LIMIT", "CURSOR"], flags: ["WEEK", "LASTWEEK", "AROUND"])
                let around = options.has("AROUND")
                if around, options["CURSOR"] != nil { throw CommandError.badArgument("AROUND and CURSOR cannot be combined") }
                let period: RankingPeriod
                switch (options.has("WEEK"), options.has("LASTWEEK")) {
                case (true, true): throw CommandError.badArgument("WEEK and LASTWEEK cannot be combined")
                case (true, false): period = .thisWeek
                case (false, true): period = .lastWeek
                case (false, false): period = .allTime
                }
                return Ranking(period: period, limit: try Arguments.pageLimit(options["LIMIT"]), cursor: options["CURSOR"]?.text, around: around)
            },
            step: { request, context in
                // From memory at once; only before the rankings are loaded does it wait for them.
                if let page = try context.board.rankingFromMemory(
                    request.period, limit: request.limit, cursor: request.cursor, around: request.around, viewer: context.session) {
                    return .done(rankingReply(page))
                }
                return .deferred {
                    rankingReply(try await context.board.ranking(
                        request.period, limit: request.limit, cursor: request.cursor, around: request.around, viewer: context.session))
                }
            }),
        CommandSpec(
            "PROFILE", arity: 0 ... 1, syntax: "PROFILE [username]",
            summary: "A user's points, stops found, hunts played and completed, rank and badges (yours without a username; needs a login then).",
            parse: { arguments -> String? in arguments.next()?.text },
            step: { username, context in
                // The totals from memory (a user without totals is looked up in the database);
                // the badges counted in the database.
                _ = try context.board.profileFromMemory(username: username, viewer: context.session)
                return .deferred {
                    CommandOutcome(.ok(JSON.profile(try await context.board.profile(username: username, viewer: context.session))))
                }
            }),
        CommandSpec(
            "BADGES", arity: 0 ... 1, syntax: "BADGES [username]",
            summary: "A user's badges, oldest first (yours without a username; needs a login then).",
            parse: { arguments -> String? in arguments.next()?.text },
            execute: { username, context in
                let badges = try await context.board.badges(username: username, viewer: context.session)
                return CommandOutcome(.ok(["badges": .array(badges.map(JSON.badge))]))
            }),
    ]
}
