import Foundation

// One call per command of the protocol (1.2 included). Reads are retried after a lost
// connection; writes carry a new REQUEST key each and are retried with it; LOGIN, REGISTER,
// AUTH, LOGOUT, RELEASE and QUIT are sent once.

private struct PinBody: Decodable { var pin: Pin }
private struct PinsBody: Decodable { var pins: [Pin]; var next: String? }
private struct ReplyBody: Decodable { var reply: Reply }
private struct RepliesBody: Decodable { var replies: [Reply]; var next: String? }
private struct UserBody: Decodable { var user: User? }
private struct ReportBody: Decodable { var report: Report }
private struct ItemsBody: Decodable { var items: [ModerationItem] }
private struct ItemBody: Decodable { var item: ModerationItem? }
private struct EntriesLogBody: Decodable { var entries: [LogEntry]; var next: String? }
private struct HuntBody: Decodable { var hunt: Hunt }
private struct HuntsBody: Decodable { var hunts: [Hunt]; var next: String? }
private struct StopBody: Decodable { var stop: Stop }
private struct CheckInBody: Decodable { var checkin: CheckIn }
private struct CheckInsBody: Decodable { var checkins: [CheckIn]; var next: String? }
private struct EntriesBody: Decodable { var entries: [LeaderboardEntry]; var next: String? }

extension ScavengerClient {
    // MARK: Connection

    /// `PING`: true when the server answered `"PONG"`.
    public func ping() async throws -> Bool {
        try await read(Line("PING"), as: String.self) == "PONG"
    }

    /// `HELLO`: the server's name, version and protocol, and this connection's user.
    public func hello() async throws -> ServerInfo {
        try await read(Line("HELLO"), as: ServerInfo.self)
    }

    /// `HELP`: the commands with their syntax and summary.
    public func help() async throws -> [CommandHelp] {
        try await read(Line("HELP"), as: [CommandHelp].self)
    }

    /// `HELP command`: one command's syntax and summary.
    public func help(_ command: String) async throws -> CommandHelp {
        var line = Line("HELP")
        line.add(command)
        return try await read(line, as: CommandHelp.self)
    }

    /// `QUIT`: the server answers `"BYE"` and closes the connection (the next call reconnects).
    public func quit() async throws {
        _ = try await once(Line("QUIT"), as: String.self)
    }

    // MARK: Accounts

    /// `REGISTER`: creates an account and logs in; the client keeps the token for reconnects.
    public func register(username: String, email: String, password: String) async throws -> Session {
        var line = Line("REGISTER")
        line.add(username)
        line.add(email)
        line.add(password)
        return try await once(line, as: Session.self)
    }

    /// `LOGIN`: logs in by name or email; the client keeps the token for reconnects.
    public func login(_ nameOrEmail: String, password: String) async throws -> Session {
        var line = Line("LOGIN")
        line.add(nameOrEmail)
        line.add(password)
        return try await once(line, as: Session.self)
    }

    /// `AUTH`: resumes a session with a token; the client keeps it for reconnects.
    @discardableResult
    public func auth(token: String) async throws -> User {
        var line = Line("AUTH")
        line.add(token)
        guard let user = try await once(line, as: UserBody.self).user else {
            throw ScavengerError(code: .badReply, message: "AUTH answered no user")
        }
        return user
    }

    /// `LOGOUT`: ends the session everywhere; the client forgets the token.
    public func logout() async throws {
        _ = try await once(Line("LOGOUT"), as: Bool.self)
    }

    /// `WHOAMI`: the connection's user, or nil.
    public func whoami() async throws -> User? {
        try await read(Line("WHOAMI"), as: UserBody.self).user
    }

    /// `FORGOT`: asks for a password reset code by mail; the server answers alike whether or not
    /// the account exists.
    public func forgot(_ nameOrEmail: String) async throws {
        var line = Line("FORGOT")
        line.add(nameOrEmail)
        _ = try await once(line, as: Bool.self)
    }

    /// `RESET`: sets a new password with the mailed code and logs in (every other session of the
    /// user ends); the client keeps the new token for reconnects.
    public func reset(username: String, code: String, newPassword: String) async throws -> Session {
        var line = Line("RESET")
        line.add(username)
        line.add(code)
        line.add(newPassword)
        return try await once(line, as: Session.self)
    }

    /// `VERIFY`: mails a verification code to the logged-in user's email.
    public func requestVerification() async throws {
        _ = try await once(Line("VERIFY"), as: Bool.self)
    }

    /// `VERIFY code`: marks the logged-in user's email verified; answers the user.
    @discardableResult
    public func verify(code: String) async throws -> User {
        var line = Line("VERIFY")
        line.add(code)
        guard let user = try await once(line, as: UserBody.self).user else {
            throw ScavengerError(code: .badReply, message: "VERIFY answered no user")
        }
        return user
    }

    // MARK: Pins

    /// `POST`: pins a text message at a place, for `ttlSeconds` (the server's default: 48 h).
    public func post(lat: Double, lon: Double, text: String, ttlSeconds: Int? = nil) async throws -> Pin {
        var line = Line("POST")
        line.add(lat)
        line.add(lon)
        line.add(text)
        line.option("TTL", ttlSeconds)
        return try await write(line, as: PinBody.self).pin
    }

    /// `POSTPHOTO`: pins a photo (JPEG, PNG, GIF or WebP) with an optional caption.
    public func postPhoto(lat: Double, lon: Double, photo: Data, caption: String? = nil, ttlSeconds: Int? = nil) async throws -> Pin {
        var line = Line("POSTPHOTO")
        line.add(lat)
        line.add(lon)
        line.add(photo.base64EncodedString())
        line.option("CAPTION", caption)
        line.option("TTL", ttlSeconds)
        return try await write(line, as: PinBody.self).pin
    }

    /// `GET`: one live pin.
    public func pin(_ id: String) async throws -> Pin {
        var line = Line("GET")
        line.add(id)
        return try await read(line, as: PinBody.self).pin
    }

    /// `PHOTO`: a photo pin's image, or a check-in's photo.
    public func photo(_ id: String) async throws -> Photo {
        var line = Line("PHOTO")
        line.add(id)
        return try await read(line, as: Photo.self)
    }

    /// A photo's path as a pin or check-in gives it (`url`, `thumb`) made absolute on the
    /// daemon's HTTP port, e.g. `https://example.org:8080`; nil when the path is not one.
    public nonisolated static func photoURL(_ path: String, base: URL) -> URL? {
        guard path.hasPrefix("/photos/") else { return nil }
        return URL(string: path, relativeTo: base)?.absoluteURL
    }

    /// `DELETE`: deletes a pin (its author or a moderator).
    public func delete(_ id: String) async throws {
        var line = Line("DELETE")
        line.add(id)
        _ = try await write(line, as: Bool.self)
    }

    /// `NEARBY`: a page of the live pins within `radiusMeters`, nearest first.
    public func nearby(
        lat: Double, lon: Double, radiusMeters: Double, kind: PinKind? = nil, limit: Int? = nil, cursor: String? = nil
    ) async throws -> Page<Pin> {
        var line = Line("NEARBY")
        line.add(lat)
        line.add(lon)
        line.add(radiusMeters)
        line.option("LIMIT", limit)
        line.option("CURSOR", cursor)
        line.option("KIND", kind?.rawValue)
        let body = try await read(line, as: PinsBody.self)
        return Page(items: body.pins, next: body.next)
    }

    /// `REGIONS`: the named regions and their numbers of live pins.
    public func regions() async throws -> [RegionSummary] {
        try await read(Line("REGIONS"), as: [RegionSummary].self)
    }

    /// `REGION`: a page of the live pins inside a named region, newest first.
    public func region(_ name: String, kind: PinKind? = nil, limit: Int? = nil, cursor: String? = nil) async throws -> Page<Pin> {
        var line = Line("REGION")
        line.add(name)
        line.option("LIMIT", limit)
        line.option("CURSOR", cursor)
        line.option("KIND", kind?.rawValue)
        let body = try await read(line, as: PinsBody.self)
        return Page(items: body.pins, next: body.next)
    }

    // MARK: Chat

    /// `REPLY`: adds a message to the chat under a pin (or of a hunt).
    public func reply(to id: String, text: String) async throws -> Reply {
        var line = Line("REPLY")
        line.add(id)
        line.add(text)
        return try await write(line, as: ReplyBody.self).reply
    }

    /// `REPLIES`: a page of the chat under a pin (or of a hunt), oldest first.
    public func replies(_ id: String, limit: Int? = nil, cursor: String? = nil) async throws -> Page<Reply> {
        var line = Line("REPLIES")
        line.add(id)
        line.option("LIMIT", limit)
        line.option("CURSOR", cursor)
        let body = try await read(line, as: RepliesBody.self)
        return Page(items: body.replies, next: body.next)
    }

    // MARK: Reports and moderation

    /// `REPORT`: reports a pin, reply, hunt or stop.
    public func report(_ id: String, reason: ReportReason, note: String? = nil) async throws -> Report {
        var line = Line("REPORT")
        line.add(id)
        line.add(reason.rawValue)
        line.option("NOTE", note)
        return try await write(line, as: ReportBody.self).report
    }

    /// `MODQUEUE`: moderators' queue of reported items.
    public func moderationQueue(status: QueueStatus? = nil, limit: Int? = nil) async throws -> [ModerationItem] {
        var line = Line("MODQUEUE")
        line.option("LIMIT", limit)
        line.option("STATUS", status?.rawValue)
        return try await read(line, as: ItemsBody.self).items
    }

    /// `CLAIM [item]`: claims that item, or the next open one (nil when none is open).
    public func claim(_ item: String? = nil) async throws -> ModerationItem? {
        var line = Line("CLAIM")
        if let item { line.add(item) }
        return try await write(line, as: ItemBody?.self)?.item
    }

    /// `RELEASE`: hands back a claim.
    public func release(_ item: String) async throws {
        var line = Line("RELEASE")
        line.add(item)
        _ = try await once(line, as: JSONValue.self)
    }

    /// `RESOLVE`: decides a claimed item; `banSeconds` nil with `.ban` is the default duration,
    /// `permanent` bans for good.
    public func resolve(
        _ item: String, _ resolution: Resolution, banSeconds: Int? = nil, permanent: Bool = false, note: String? = nil
    ) async throws -> ModerationItem {
        var line = Line("RESOLVE")
        line.add(item)
        line.add(resolution.rawValue)
        if permanent { line.option("DURATION", "permanent") } else { line.option("DURATION", banSeconds) }
        line.option("NOTE", note)
        guard let item = try await write(line, as: ItemBody.self).item else {
            throw ScavengerError(code: .badReply, message: "RESOLVE answered no item")
        }
        return item
    }

    /// `BAN`: bans a user for `seconds`, or for good when nil.
    public func ban(_ username: String, seconds: Int?, note: String? = nil) async throws {
        var line = Line("BAN")
        line.add(username)
        line.add(seconds.map(String.init) ?? "permanent")
        line.option("NOTE", note)
        _ = try await write(line, as: Bool.self)
    }

    /// `UNBAN`: lifts a ban.
    public func unban(_ username: String) async throws {
        var line = Line("UNBAN")
        line.add(username)
        _ = try await write(line, as: Bool.self)
    }

    /// `MODLOG`: a page of moderators' actions, newest first.
    public func moderationLog(limit: Int? = nil, cursor: String? = nil) async throws -> Page<LogEntry> {
        var line = Line("MODLOG")
        line.option("LIMIT", limit)
        line.option("CURSOR", cursor)
        let body = try await read(line, as: EntriesLogBody.self)
        return Page(items: body.entries, next: body.next)
    }

    // MARK: Hunts

    /// `CREATEHUNT`: a hunt the caller hosts (the reply holds its join `code`); `teams` or
    /// `teamSize` make a team hunt, `trialSeconds` a time trial, `badge` the hunt's own badge.
    public func createHunt(
        name: String, description: String? = nil, ordered: Bool = false, isPublic: Bool = false, starts: Date? = nil,
        ends: Date? = nil, durationSeconds: Int? = nil, teams: Bool = false, teamSize: Int? = nil, trialSeconds: Int? = nil,
        badge: String? = nil, guests: Int? = nil
    ) async throws -> Hunt {
        var line = Line("CREATEHUNT")
        line.add(name)
        line.option("DESCRIPTION", description)
        line.flag("ORDERED", ordered)
        line.flag("PUBLIC", isPublic)
        line.option("STARTS", starts.map(Self.time))
        line.option("ENDS", ends.map(Self.time))
        line.option("DURATION", durationSeconds)
        // Protocol 1.4: a team hunt (`TEAMS [SIZE n]`; a size implies teams), a time trial, a badge.
        line.flag("TEAMS", teams || teamSize != nil)
        line.option("SIZE", teamSize)
        line.option("TRIAL", trialSeconds)
        line.option("BADGE", badge)
        // Protocol 1.5: up to `guests` players may join without an account.
        if let guests {
            line.flag("GUESTS", true)
            line.add(guests)
        }
        return try await write(line, as: HuntBody.self).hunt
    }

    /// `ADDSTOP`: adds a stop at the end of a scheduled hunt the caller hosts.
    public func addStop(
        hunt: String, lat: Double, lon: Double, radiusMeters: Double, points: Int, title: String, clue: String? = nil,
        proof: Proof? = nil, code: String? = nil, hidden: Bool = false
    ) async throws -> Stop {
        var line = Line("ADDSTOP")
        line.add(hunt)
        line.add(lat)
        line.add(lon)
        line.add(radiusMeters)
        line.add(points)
        line.add(title)
        line.option("CLUE", clue)
        line.option("PROOF", proof?.rawValue)
        line.option("CODE", code)
        line.flag("HIDDEN", hidden)
        return try await write(line, as: StopBody.self).stop
    }

    /// `REMOVESTOP`: removes a stop from a scheduled hunt.
    public func removeStop(_ stop: String) async throws {
        var line = Line("REMOVESTOP")
        line.add(stop)
        _ = try await write(line, as: Bool.self)
    }

    /// `JOIN`: joins a hunt by its code (or a public hunt by id), optionally under another name.
    /// A team hunt is joined with a `team` (protocol 1.4): the team of that name (in any case), or
    /// a new one; joining again with another team moves the player. A full team is `CONFLICT`; a
    /// team for a hunt of single players, or none for a team hunt, is `BAD_ARGUMENT`.
    public func join(_ codeOrID: String, as name: String? = nil, team: String? = nil) async throws -> Hunt {
        var line = Line("JOIN")
        line.add(codeOrID)
        line.option("AS", name)
        line.option("TEAM", team)
        return try await write(line, as: HuntBody.self).hunt
    }

    /// `JOIN code AS name GUEST` (protocol 1.5): joins a hunt that takes guests, without an account,
    /// on a client with no login; the client keeps the guest session's token for reconnects. Sent
    /// once (a retry makes another guest).
    public func joinAsGuest(_ code: String, as name: String, team: String? = nil) async throws -> GuestSession {
        var line = Line("JOIN")
        line.add(code)
        line.option("AS", name)
        line.option("TEAM", team)
        line.flag("GUEST", true)
        return try await once(line, as: GuestSession.self)
    }

    /// `LEAVE`: leaves a hunt before it ends.
    public func leave(_ hunt: String) async throws {
        var line = Line("LEAVE")
        line.add(hunt)
        _ = try await write(line, as: Bool.self)
    }

    /// `HUNT`: a hunt with the stops the caller may see, hints, standing and winners.
    public func hunt(_ id: String) async throws -> HuntDetails {
        var line = Line("HUNT")
        line.add(id)
        return try await read(line, as: HuntDetails.self)
    }

    /// `HUNTS`: public hunts that have not ended (`mine`: the caller's), optionally near a point.
    public func hunts(
        mine: Bool = false, near: (lat: Double, lon: Double, radiusMeters: Double)? = nil, limit: Int? = nil,
        cursor: String? = nil
    ) async throws -> Page<Hunt> {
        var line = Line("HUNTS")
        line.flag("MINE", mine)
        if let near {
            line.flag("NEAR", true)
            line.add(near.lat)
            line.add(near.lon)
            line.add(near.radiusMeters)
        }
        line.option("LIMIT", limit)
        line.option("CURSOR", cursor)
        let body = try await read(line, as: HuntsBody.self)
        return Page(items: body.hunts, next: body.next)
    }

    /// `STARTHUNT`: starts a scheduled hunt now.
    public func startHunt(_ hunt: String) async throws -> Hunt {
        var line = Line("STARTHUNT")
        line.add(hunt)
        return try await write(line, as: HuntBody.self).hunt
    }

    /// `EXTEND`: moves a hunt's end later by `seconds`.
    public func extend(_ hunt: String, seconds: Int) async throws -> Hunt {
        var line = Line("EXTEND")
        line.add(hunt)
        line.add(seconds)
        return try await write(line, as: HuntBody.self).hunt
    }

    /// `ENDHUNT`: ends a hunt now (its host or a moderator).
    public func endHunt(_ hunt: String) async throws -> Hunt {
        var line = Line("ENDHUNT")
        line.add(hunt)
        return try await write(line, as: HuntBody.self).hunt
    }

    /// `HINT`: sends a hint to a running hunt's players.
    public func hint(_ hunt: String, text: String) async throws {
        var line = Line("HINT")
        line.add(hunt)
        line.add(text)
        _ = try await write(line, as: Bool.self)
    }

    /// `CHECKIN`: proves presence at a stop; the server judges and answers the standing.
    public func checkIn(
        stop: String, lat: Double, lon: Double, accuracyMeters: Double? = nil, code: String? = nil, photo: Data? = nil
    ) async throws -> CheckInResult {
        var line = Line("CHECKIN")
        line.add(stop)
        line.add(lat)
        line.add(lon)
        line.option("ACCURACY", accuracyMeters)
        line.option("CODE", code)
        line.option("PHOTO", photo?.base64EncodedString())
        return try await write(line, as: CheckInResult.self)
    }

    /// `REVIEW`: a page of a hunt's pending and flagged check-ins, oldest first.
    public func review(_ hunt: String, limit: Int? = nil, cursor: String? = nil) async throws -> Page<CheckIn> {
        var line = Line("REVIEW")
        line.add(hunt)
        line.option("LIMIT", limit)
        line.option("CURSOR", cursor)
        let body = try await read(line, as: CheckInsBody.self)
        return Page(items: body.checkins, next: body.next)
    }

    /// `APPROVE`: accepts a pending or flagged check-in, with an optional bonus.
    public func approve(_ checkIn: String, bonus: Int? = nil) async throws -> CheckIn {
        var line = Line("APPROVE")
        line.add(checkIn)
        line.option("BONUS", bonus)
        return try await write(line, as: CheckInBody.self).checkin
    }

    /// `REJECT`: rejects a check-in.
    public func reject(_ checkIn: String, note: String? = nil) async throws -> CheckIn {
        var line = Line("REJECT")
        line.add(checkIn)
        line.option("NOTE", note)
        return try await write(line, as: CheckInBody.self).checkin
    }

    // MARK: Scores

    /// `LEADERBOARD`: a page of a hunt's leaderboard (`around`: the page with the caller's entry).
    public func leaderboard(_ hunt: String, limit: Int? = nil, cursor: String? = nil, around: Bool = false) async throws
        -> Page<LeaderboardEntry>
    {
        var line = Line("LEADERBOARD")
        line.add(hunt)
        line.option("LIMIT", limit)
        line.option("CURSOR", cursor)
        line.flag("AROUND", around)
        let body = try await read(line, as: EntriesBody.self)
        return Page(items: body.entries, next: body.next)
    }

    /// `RANKING`: a page of every user with points, all-time or by week.
    public func ranking(_ period: RankingPeriod = .allTime, limit: Int? = nil, cursor: String? = nil, around: Bool = false)
        async throws -> Page<LeaderboardEntry>
    {
        var line = Line("RANKING")
        if period != .allTime { line.flag(period.rawValue, true) }
        line.option("LIMIT", limit)
        line.option("CURSOR", cursor)
        line.flag("AROUND", around)
        let body = try await read(line, as: EntriesBody.self)
        return Page(items: body.entries, next: body.next)
    }

    /// `PROFILE [username]`: a user's totals (the caller's without a name).
    public func profile(_ username: String? = nil) async throws -> Profile {
        var line = Line("PROFILE")
        if let username { line.add(username) }
        return try await read(line, as: Profile.self)
    }

    /// `BADGES [username]`: a user's badges, oldest first (the caller's without a name).
    public func badges(of username: String? = nil) async throws -> [Badge] {
        struct Body: Decodable { var badges: [Badge] }
        var line = Line("BADGES")
        if let username { line.add(username) }
        return try await read(line, as: Body.self).badges
    }

    static func time(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }
}
