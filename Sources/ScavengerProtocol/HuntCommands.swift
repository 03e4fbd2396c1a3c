import ScavengerBoard
import ScavengerCore

extension JSON {
    /// The contract's hunt object; `code` only in the host's view.
    public static func hunt(_ view: HuntView) -> JSON {
        let hunt = view.hunt
        var members: [(String, JSON)] = [
            ("id", .string(hunt.id)), ("name", .string(hunt.name)), ("description", .string(hunt.description)),
            ("host", .string(hunt.host)), ("state", .string(hunt.state.rawValue)), ("starts", .optional(hunt.starts?.rfc3339)),
            ("ends", .optional(hunt.ends?.rfc3339)), ("ordered", .bool(hunt.ordered)), ("public", .bool(hunt.isPublic)),
            ("stops", .int(hunt.stops)), ("players", .int(hunt.players)), ("teams", hunt.teams.map(JSON.int) ?? .null),
            ("trial", hunt.trial.map(JSON.int) ?? .null), ("badge", .optional(hunt.badge)), ("guests", hunt.guests.map(JSON.int) ?? .null),
        ]
        if let code = view.code { members.append(("code", .string(code.text))) }
        return .object(members)
    }

    /// The contract's stop object: a hidden place is `null` unless shown to this viewer.
    public static func stop(_ view: StopView) -> JSON {
        let stop = view.stop
        return .object([
            ("id", .string(stop.id)), ("hunt", .string(stop.hunt)), ("n", .int(stop.n)), ("title", .string(stop.title)),
            ("clue", .string(stop.clue)), ("lat", view.showsPlace ? .double(stop.lat) : .null),
            ("lon", view.showsPlace ? .double(stop.lon) : .null), ("radius_m", .double(stop.radiusMeters)),
            ("points", .int(stop.points)), ("proof", .string(stop.proof.rawValue)), ("found_by", .int(stop.foundBy)),
        ])
    }

    /// The contract's check-in object; for its reviewers (`REVIEW`, `APPROVE`, `REJECT`) with
    /// `travel`, the figures of a travel-speed flag or null. No reply to the player carries it.
    public static func checkIn(_ checkIn: CheckIn, forReviewer: Bool = false) -> JSON {
        var fields: [(String, JSON)] = [
            ("id", .string(checkIn.id)), ("hunt", .string(checkIn.hunt)), ("stop", .string(checkIn.stop)),
            ("player", .string(checkIn.player)), ("status", .string(checkIn.status.rawValue)), ("points", .int(checkIn.points)),
            ("at", .string(checkIn.at.rfc3339)), ("distance_m", .double(checkIn.distanceMeters)),
            ("photo", checkIn.photo.map { photo in
                .object([
                    ("mime", .string(photo.mime)), ("bytes", .int(photo.bytes)), ("width", .int(photo.width)),
                    ("height", .int(photo.height)), ("url", .string(PhotoPaths.original(checkIn.id))),
                    ("thumb", .string(PhotoPaths.thumb(checkIn.id))),
                ])
            } ?? .null),
        ]
        if forReviewer {
            fields.append(("travel", checkIn.travel.map { travel in
                .object([("from_m", .double(travel.fromMeters)), ("seconds", .double(travel.seconds)), ("kmh", .double(travel.kmh))])
            } ?? .null))
        }
        return .object(fields)
    }

    /// The contract's leaderboard entry.
    public static func entry(_ entry: LeaderboardEntry) -> JSON {
        var fields: [(String, JSON)] = [
            ("rank", .int(entry.rank)), ("player", .string(entry.player)), ("points", .int(entry.points)),
            ("found", .int(entry.found)), ("at", .optional(entry.at?.rfc3339)),
        ]
        // A time trial's entry: seconds from the first check-in to the last accepted one.
        if entry.isTrial { fields.append(("time_s", entry.trialSeconds.map(JSON.double) ?? .null)) }
        // A team hunt's entry is a team's: its members' names.
        if let members = entry.members { fields.append(("members", .array(members.map(JSON.string)))) }
        return .object(fields)
    }
}

/// CREATEHUNT, ADDSTOP, REMOVESTOP, JOIN, LEAVE, HUNT, HUNTS, STARTHUNT, EXTEND, ENDHUNT, HINT,
/// CHECKIN, REVIEW, APPROVE, REJECT, LEADERBOARD: the game.
enum HuntCommands {
    /// A time option: RFC 3339 in UTC.
    static func time(_ token: Token, _ name: String) throws(CommandError) -> Timestamp {
        guard let time = Timestamp(rfc3339: token.text) else {
            throw .badArgument("\(name) must be a time in RFC 3339 in UTC, like 2026-11-21T18:00:00Z, got \(Reply.echo(token.text))")
        }
        return time
    }

    /// An id argument.
    static func id(_ arguments: inout Arguments, _ name: String) throws(CommandError) -> String {
        try arguments.required(name).text
    }

    /// `{"hunt": hunt}`.
    static func huntReply(_ view: HuntView) -> CommandOutcome {
        CommandOutcome(.ok(huntJSON(view)))
    }

    /// `{"hunt": hunt}`, the reply of the writes that answer a hunt.
    @Sendable static func huntJSON(_ view: HuntView) -> JSON { ["hunt": .hunt(view)] }

    /// `{"checkin": checkin}`, APPROVE's and REJECT's reply.
    /// A reviewer's reply (`APPROVE`, `REJECT`): the check-in with its travel figures.
    @Sendable static func checkInJSON(_ checkIn: CheckIn) -> JSON { ["checkin": .checkIn(checkIn, forReviewer: true)] }

    struct Hunts: Sendable {
        var mine = false
        var near: (lat: Double, lon: Double, radius: Double)?
        var limit = 50
        var cursor: String?
    }

    struct Join: Sendable {
        var target: String
        var name: String?
        var team: String?
        var guest: Bool
    }

    struct Leaderboard: Sendable {
        var hunt: String
        var limit: Int
        var cursor: String?
        var around: Bool
    }

    static let all: [CommandSpec] = [
        CommandSpec(
            "CREATEHUNT", arity: 1 ... 18,
            syntax: "CREATEHUNT name [DESCRIPTION text] [ORDERED] [PUBLIC] [STARTS time] [ENDS time|DURATION seconds] [TEAMS [SIZE n]] [TRIAL seconds] [BADGE name] [GUESTS [n]]",
            summary: "Creates a hunt you host, with a join code only you are shown; add stops before it starts (TEAMS: played by teams of at most SIZE players, default 6; TRIAL: each player or team has that long from their first check-in; BADGE: a badge for everyone who completes it; GUESTS: up to n players, default 100, may join with just a name).",
            parse: { arguments -> HuntDraft in
                let name = try arguments.required("name").text
                let options = try arguments.options(
                    ["DESCRIPTION", "STARTS", "ENDS", "DURATION", "SIZE", "TRIAL", "BADGE"], flags: ["ORDERED", "PUBLIC", "TEAMS"],
                    counted: ["GUESTS"])
                var draft = HuntDraft(name: name, ordered: options.has("ORDERED"), isPublic: options.has("PUBLIC"))
                draft.description = options["DESCRIPTION"]?.text ?? ""
                draft.starts = try options["STARTS"].map { token throws(CommandError) in try time(token, "STARTS") }
                draft.ends = try options["ENDS"].map { token throws(CommandError) in try time(token, "ENDS") }
                draft.durationSeconds = try options["DURATION"].map { token throws(CommandError) in
                    try Arguments.integer(token, "DURATION", in: HuntLimits.durationSeconds)
                }
                if let size = options["SIZE"] {
                    guard options.has("TEAMS") else { throw CommandError.badArgument("SIZE is the size of a team hunt's teams: give TEAMS too") }
                    draft.teamSize = try Arguments.integer(size, "SIZE", in: HuntLimits.teamSize)
                } else if options.has("TEAMS") {
                    draft.teamSize = HuntLimits.defaultTeamSize
                }
                draft.trialSeconds = try options["TRIAL"].map { token throws(CommandError) in
                    try Arguments.integer(token, "TRIAL", in: HuntLimits.trialSeconds)
                }
                draft.badgeName = options["BADGE"]?.text
                if options.has("GUESTS") {
                    draft.guests = try options["GUESTS"].map { token throws(CommandError) in
                        try Arguments.integer(token, "GUESTS", in: HuntLimits.guests)
                    } ?? HuntLimits.defaultGuests
                }
                return draft
            },
            execute: { draft, context in
                huntReply(try await context.board.createHunt(draft, by: context.session, request: context.keyed()))
            }),
        CommandSpec(
            "ADDSTOP", arity: 6 ... 13,
            syntax: "ADDSTOP hunt lat lon radius_m points title [CLUE text] [PROOF place|code|photo] [CODE secret] [HIDDEN]",
            summary: "Adds a stop at the end of a hunt you host, before it starts (radius_m 5–1,000, points 0–10,000).",
            parse: { arguments -> (String, StopDraft) in
                let hunt = try id(&arguments, "hunt id")
                let (lat, lon) = try arguments.location()
                let radius = try Arguments.number(arguments.required("radius_m"), "radius_m")
                let points = try Arguments.integer(arguments.required("points"), "points", in: HuntLimits.points)
                let title = try arguments.required("title").text
                let options = try arguments.options(["CLUE", "PROOF", "CODE"], flags: ["HIDDEN"])
                var proof = StopProof.place
                if let token = options["PROOF"] {
                    guard let parsed = StopProof(rawValue: token.text.asciiLowercased) else {
                        throw CommandError.badArgument("PROOF must be place, code or photo")
                    }
                    proof = parsed
                }
                return (hunt, StopDraft(
                    lat: lat, lon: lon, radiusMeters: radius, points: points, title: title, clue: options["CLUE"]?.text ?? "",
                    proof: proof, code: options["CODE"]?.text, hidden: options.has("HIDDEN")))
            },
            execute: { request, context in
                let render: @Sendable (StopView) -> JSON = { ["stop": .stop($0)] }
                let stop = try await context.board.addStop(huntID: request.0, request.1, by: context.session, request: context.keyed())
                return CommandOutcome(.ok(render(stop)))
            }),
        CommandSpec(
            "REMOVESTOP", arity: 1 ... 1, syntax: "REMOVESTOP stop",
            summary: "Removes a stop from a hunt you host, before it starts; later stops move up one place.",
            parse: { arguments in try id(&arguments, "stop id") },
            execute: { stop, context in
                try await context.board.removeStop(id: stop, by: context.session, request: context.keyed())
                return CommandOutcome(.ok(true))
            }),
        CommandSpec(
            "JOIN", arity: 1 ... 6, syntax: "JOIN code-or-id [AS name] [TEAM team] [GUEST]",
            summary: "Joins a hunt by its join code (or a public hunt by id), as your username or another name; a team hunt for a team (a new name makes it; another moves you). GUEST, with no login: join a hunt that takes guests by its code AS a name, without an account (answers a guest session's token).",
            parse: { arguments -> Join in
                let target = try arguments.required("code or hunt id").text
                let options = try arguments.options(["AS", "TEAM"], flags: ["GUEST"])
                let join = Join(target: target, name: options["AS"]?.text, team: options["TEAM"]?.text, guest: options.has("GUEST"))
                if join.guest, join.name == nil { throw CommandError.badArgument("a guest joins with a name: JOIN code AS name GUEST") }
                return join
            },
            execute: { join, context in
                guard join.guest, let name = join.name else {
                    return huntReply(try await context.board.join(
                        join.target, as: join.name, team: join.team, by: context.session, request: context.keyed()))
                }
                if context.requestKey != nil {
                    throw BoardError(.badArgument, "JOIN … GUEST takes no REQUEST key: it makes a new guest each time (a retry that finds the name taken may JOIN with another)")
                }
                let guest = try await context.board.joinAsGuest(join.target, as: name, team: join.team, on: context.session)
                return CommandOutcome(.ok(["hunt": .hunt(guest.hunt), "token": .string(guest.token), "user": .user(guest.user)]))
            }),
        CommandSpec(
            "LEAVE", arity: 1 ... 1, syntax: "LEAVE hunt",
            summary: "Leaves a hunt before it ends; your check-ins and points leave with you.",
            parse: { arguments in try id(&arguments, "hunt id") },
            execute: { hunt, context in
                try await context.board.leave(huntID: hunt, by: context.session, request: context.keyed())
                return CommandOutcome(.ok(true))
            }),
        CommandSpec(
            "HUNT", arity: 1 ... 1, syntax: "HUNT id",
            summary: "A hunt with the stops you may see, its hints, your standing and, once ended, its winners.",
            parse: { arguments in try id(&arguments, "hunt id") },
            execute: { hunt, context in
                let details = try await context.board.hunt(id: hunt, viewer: context.session)
                let me: JSON = details.me.map { me in
                    var fields: [(String, JSON)] = [
                        ("points", .int(me.points)), ("found", .array(me.found.map(JSON.string))), ("rank", .int(me.rank)),
                    ]
                    if let team = me.team { fields.append(("team", .string(team))) }
                    return .object(fields)
                } ?? .null
                return CommandOutcome(.ok(.object([
                    ("hunt", .hunt(details.view)), ("stops", .array(details.stops.map(JSON.stop))),
                    ("hints", .array(details.hints.map { .object([("text", .string($0.text)), ("at", .string($0.at.rfc3339))]) })),
                    ("me", me), ("winners", .array(details.winners.map(JSON.string))),
                ])))
            }),
        CommandSpec(
            "HUNTS", arity: 0 ... 9, syntax: "HUNTS [MINE] [NEAR lat lon radius_m] [LIMIT n] [CURSOR c]",
            summary: "Public hunts that have not ended, running first (NEAR: with a stop within radius_m, nearest first); MINE: yours.",
            parse: { arguments -> Hunts in
                var request = Hunts()
                var seen = Set<String>()
                while let keyword = arguments.next() {
                    let key = keyword.text.asciiUppercased
                    guard ["MINE", "NEAR", "LIMIT", "CURSOR"].contains(key) else {
                        throw CommandError.badArgument("unknown option \(Reply.echo(keyword.text)) for HUNTS (expected CURSOR, LIMIT, MINE, NEAR)")
                    }
                    guard seen.insert(key).inserted else { throw CommandError.badArgument("option \(key) given twice") }
                    switch key {
                    case "MINE": request.mine = true
                    case "NEAR": request.near = try arguments.circle()
                    case "LIMIT": request.limit = try Arguments.pageLimit(arguments.required("LIMIT value"))
                    default: request.cursor = try arguments.required("CURSOR value").text
                    }
                }
                if request.mine, request.near != nil { throw CommandError.badArgument("MINE and NEAR cannot be combined") }
                return request
            },
            execute: { request, context in
                let page = try await context.board.hunts(
                    mine: request.mine, near: request.near, limit: request.limit, cursor: request.cursor, viewer: context.session)
                return CommandOutcome(.ok(["hunts": .array(page.hunts.map(JSON.hunt)), "next": .optional(page.next)]))
            }),
        CommandSpec(
            "STARTHUNT", arity: 1 ... 1, syntax: "STARTHUNT hunt", summary: "Starts a scheduled hunt you host now.",
            parse: { arguments in try id(&arguments, "hunt id") },
            execute: { hunt, context in huntReply(try await context.board.startHunt(id: hunt, by: context.session, request: context.keyed())) }),
        CommandSpec(
            "EXTEND", arity: 2 ... 2, syntax: "EXTEND hunt seconds",
            summary: "Moves the end of a hunt you host later by seconds (a hunt with no end gets one).",
            parse: { arguments -> (String, Int) in
                let hunt = try id(&arguments, "hunt id")
                return (hunt, try Arguments.integer(arguments.required("seconds"), "seconds", in: HuntLimits.extendSeconds))
            },
            execute: { request, context in
                huntReply(try await context.board.extendHunt(id: request.0, bySeconds: request.1, by: context.session, request: context.keyed()))
            }),
        CommandSpec(
            "ENDHUNT", arity: 1 ... 1, syntax: "ENDHUNT hunt", summary: "Ends a hunt now (its host, or a moderator).",
            parse: { arguments in try id(&arguments, "hunt id") },
            execute: { hunt, context in huntReply(try await context.board.endHunt(id: hunt, by: context.session, request: context.keyed())) }),
        CommandSpec(
            "HINT", arity: 2 ... 2, syntax: "HINT hunt text",
            summary: "Sends a hint (1–500 characters) to the players of a running hunt you host.",
            parse: { arguments -> (String, String) in
                (try id(&arguments, "hunt id"), try Arguments.text(arguments.required("text")))
            },
            execute: { request, context in
                try await context.board.hint(huntID: request.0, text: request.1, by: context.session, request: context.keyed())
                return CommandOutcome(.ok(true))
            }),
        CommandSpec(
            "CHECKIN", arity: 3 ... 9, syntax: "CHECKIN stop lat lon [ACCURACY metres] [CODE secret] [PHOTO base64]",
            summary: "Proves you are at a stop; the server judges the distance, code or photo and answers your standing.",
            parse: { arguments -> (CheckInDraft, String?) in
                let stop = try id(&arguments, "stop id")
                let (lat, lon) = try arguments.location()
                let options = try arguments.options(["ACCURACY", "CODE", "PHOTO"])
                let accuracy = try options["ACCURACY"].map { token throws(CommandError) in try Arguments.number(token, "ACCURACY") } ?? 0
                let draft = CheckInDraft(stopID: stop, fix: Fix(lat: lat, lon: lon, accuracyMeters: accuracy), code: options["CODE"]?.text)
                return (draft, options["PHOTO"]?.text)
            },
            execute: { request, context in
                var draft = request.0
                if let photo = request.1 { draft.photo = try context.board.photo(fromBase64: photo) }
                let render: @Sendable (CheckInResult) -> JSON = { result in
                    .object([
                        ("checkin", .checkIn(result.checkIn)),
                        ("score", .object([("points", .int(result.points)), ("found", .int(result.found)), ("rank", .int(result.rank))])),
                    ])
                }
                let result = try await context.board.checkIn(draft, by: context.session, request: context.keyed())
                return CommandOutcome(.ok(render(result)))
            }),
        CommandSpec(
            "REVIEW", arity: 1 ... 5, syntax: "REVIEW hunt [LIMIT n] [CURSOR c]",
            summary: "Pending and flagged check-ins of a hunt, oldest first (its host or a moderator).",
            parse: { arguments -> (String, Int, String?) in
                let hunt = try id(&arguments, "hunt id")
                let options = try arguments.options(["LIMIT", "CURSOR"])
                return (hunt, try Arguments.pageLimit(options["LIMIT"]), options["CURSOR"]?.text)
            },
            execute: { request, context in
                let page = try await context.board.checkInsToReview(
                    huntID: request.0, limit: request.1, cursor: request.2, by: context.session)
                return CommandOutcome(.ok(["checkins": .array(page.checkIns.map { JSON.checkIn($0, forReviewer: true) }), "next": .optional(page.next)]))
            }),
        CommandSpec(
            "APPROVE", arity: 1 ... 3, syntax: "APPROVE checkin [BONUS points]",
            summary: "Accepts a pending or flagged check-in: the stop's points plus a bonus (0–10,000).",
            parse: { arguments -> (String, Int) in
                let checkIn = try id(&arguments, "check-in id")
                let options = try arguments.options(["BONUS"])
                let bonus = try options["BONUS"].map { token throws(CommandError) in
                    try Arguments.integer(token, "BONUS", in: HuntLimits.bonus)
                } ?? 0
                return (checkIn, bonus)
            },
            execute: { request, context in
                let checkIn = try await context.board.approve(
                    checkInID: request.0, bonus: request.1, by: context.session, request: context.keyed())
                return CommandOutcome(.ok(checkInJSON(checkIn)))
            }),
        CommandSpec(
            "REJECT", arity: 1 ... 3, syntax: "REJECT checkin [NOTE text]",
            summary: "Rejects a check-in (an accepted one's points leave the score); the player may try again.",
            parse: { arguments -> (String, String?) in
                let checkIn = try id(&arguments, "check-in id")
                let options = try arguments.options(["NOTE"])
                return (checkIn, options["NOTE"]?.text)
            },
            execute: { request, context in
                let checkIn = try await context.board.reject(
                    checkInID: request.0, note: request.1, by: context.session, request: context.keyed())
                return CommandOutcome(.ok(checkInJSON(checkIn)))
            }),
        CommandSpec(
            "LEADERBOARD", arity: 1 ... 6, syntax: "LEADERBOARD hunt [LIMIT n] [CURSOR c] [AROUND]",
            summary: "A hunt's leaderboard: points, then who got there first, then name; AROUND: the page with your entry.",
            parse: { arguments -> Leaderboard in
                let hunt = try id(&arguments, "hunt id")
                let options = try arguments.options(["LIMIT", "CURSOR"], flags: ["AROUND"])
                let around = options.has("AROUND")
                if around, options["CURSOR"] != nil { throw CommandError.badArgument("AROUND and CURSOR cannot be combined") }
                return Leaderboard(hunt: hunt, limit: try Arguments.pageLimit(options["LIMIT"]), cursor: options["CURSOR"]?.text, around: around)
            },
            execute: { request, context in
                let page = try await context.board.leaderboard(
                    huntID: request.hunt, limit: request.limit, cursor: request.cursor, around: request.around, viewer: context.session)
                return CommandOutcome(.ok(["entries": .array(page.entries.map(JSON.entry)), "next": .optional(page.next)]))
            }),
    ]
}
