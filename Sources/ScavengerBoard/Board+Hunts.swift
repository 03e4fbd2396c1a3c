import ScavengerCore
import ScavengerStore
import Sodium

/// A hunt to create (CREATEHUNT), checked by ``Board/createHunt(_:by:)``.
public struct HuntDraft: Sendable {
    public var name: String
    public var description: String
    public var ordered: Bool
    public var isPublic: Bool
    public var starts: Timestamp?
    public var ends: Timestamp?
    public var durationSeconds: Int?
    /// `TEAMS [SIZE n]`: the largest team of a team hunt; nil for single players.
    public var teamSize: Int? = nil
    /// `TRIAL seconds`: a time trial's length; nil for none.
    public var trialSeconds: Int? = nil
    /// `BADGE name`: the hunt's own badge; nil for none.
    public var badgeName: String? = nil
    /// `GUESTS [n]`: how many may join with just a name; nil: accounts only.
    public var guests: Int? = nil

    public init(
        name: String, description: String = "", ordered: Bool = false, isPublic: Bool = false, starts: Timestamp? = nil,
        ends: Timestamp? = nil, durationSeconds: Int? = nil
    ) {
        self.name = name
        self.description = description
        self.ordered = ordered
        self.isPublic = isPublic
        self.starts = starts
        self.ends = ends
        self.durationSeconds = durationSeconds
    }
}

/// A stop to add (ADDSTOP).
public struct StopDraft: Sendable {
    public var lat: Double
    public var lon: Double
    public var radiusMeters: Double
    public var points: Int
    public var title: String
    public var clue: String
    public var proof: StopProof
    /// The secret of a code stop, in clear until it is hashed here.
    public var code: String?
    public var hidden: Bool

    public init(
        lat: Double, lon: Double, radiusMeters: Double, points: Int, title: String, clue: String = "", proof: StopProof = .place,
        code: String? = nil, hidden: Bool = false
    ) {
        self.lat = lat
        self.lon = lon
        self.radiusMeters = radiusMeters
        self.points = points
        self.title = title
        self.clue = clue
        self.proof = proof
        self.code = code
        self.hidden = hidden
    }
}

/// A check-in as a player sends it (CHECKIN): where they are, and the code or photo a stop asks for.
public struct CheckInDraft: Sendable {
    public var stopID: String
    public var fix: Fix
    public var code: String?
    public var photo: Photo?

    public init(stopID: String, fix: Fix, code: String? = nil, photo: Photo? = nil) {
        self.stopID = stopID
        self.fix = fix
        self.code = code
        self.photo = photo
    }
}

/// A hunt as one viewer may see it: with its join code for its host only.
public struct HuntView: Sendable, Equatable, Codable {
    public var hunt: Hunt
    /// The join code: set only when the viewer is the host.
    public var code: JoinCode?

    public init(hunt: Hunt, code: JoinCode?) {
        self.hunt = hunt
        self.code = code
    }
}

/// A stop as one viewer may see it.
public struct StopView: Sendable, Equatable, Codable {
    public var stop: HuntStop
    /// Whether its place is shown (not for a hidden stop, but to its host and to those who found it).
    public var showsPlace: Bool
}

/// A hint the host sent.
public struct HuntHint: Sendable, Equatable {
    public var text: String
    public var at: Timestamp
}

/// A player's own standing in a hunt.
public struct PlayerStanding: Sendable, Equatable {
    public var points: Int
    /// The ids of the stops they found (accepted check-ins), in the hunt's order.
    public var found: [String]
    public var rank: Int
    /// In a team hunt: the player's team, whose standing this is (its points, the stops it
    /// found, its rank among teams); nil in a hunt of single players.
    public var team: String? = nil
}

/// What HUNT answers.
public struct HuntDetails: Sendable, Equatable {
    public var view: HuntView
    public var stops: [StopView]
    public var hints: [HuntHint]
    /// The viewer's standing, when they play the hunt.
    public var me: PlayerStanding?
    /// Once it has ended: the players who found every stop, first finisher first.
    public var winners: [String]
}

/// A check-in and the player's standing after it.
public struct CheckInResult: Sendable, Equatable, Codable {
    public var checkIn: CheckIn
    public var points: Int
    public var found: Int
    public var rank: Int
}

/// A page of hunts and the cursor of the next.
public struct HuntPage: Sendable, Equatable {
    public var hunts: [HuntView]
    public var next: String?
}

extension Board {
    static let noSuchHunt = BoardError(.notFound, "no such hunt")
    static let noSuchStop = BoardError(.notFound, "no such stop")
    static let noSuchCheckIn = BoardError(.notFound, "no such check-in")
    /// Join codes drawn before giving up (a clash needs a billion live hunts to be likely).
    static let joinCodeDraws = 8

    /// Runs a rule inside a store transaction: its refusal rolls the transaction back.
    static func rule<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let refusal as BoardError {
            throw StoreError.refused(refusal)
        } catch let refusal as GameRefusal {
            throw StoreError.refused(BoardError(refusal))
        } catch let conflict as HuntConflict {
            throw StoreError.refused(BoardError(.conflict, conflict.message))
        } catch let invalid as ValidationError {
            throw StoreError.refused(BoardError(.badArgument, invalid.message))
        }
    }

    /// The host's view of a hunt.
    static func hosted(_ record: HuntRecord, at now: Timestamp) -> HuntView {
        HuntView(hunt: record.hunt(at: now), code: record.code)
    }

    /// The user id of a logged-in viewer as last checked (``checkedViewerID(of:)`` asks the database).
    static func viewerID(_ session: Session) -> Int? { session.login?.userID }

    // MARK: The host's calls

    /// CREATEHUNT: a new hunt with a fresh join code, counted against the host's `POST` rate.
    public func createHunt(_ draft: HuntDraft, by session: Session, request: RequestKey<HuntView>? = nil) async throws(BoardError) -> HuntView {
        try await replaying(request, by: session) { () async throws(BoardError) -> HuntView in
            try guardedNow {
                try Validation.huntName(draft.name)
                try Validation.huntDescription(draft.description)
                if let badge = draft.badgeName { try Validation.badgeName(badge) }
                try HuntDecisions.options(teamSize: draft.teamSize, trialSeconds: draft.trialSeconds)
            }
            let now = clock.now
            let schedule: HuntSchedule
            do throws(ValidationError) {
                schedule = try HuntSchedule(starts: draft.starts, ends: draft.ends, durationSeconds: draft.durationSeconds, now: now)
            } catch {
                throw BoardError(.badArgument, error.message)
            }
            return try await guarded {
                let account = try await writer(of: session)
                try await requireVerifiedEmailForHunts(account)
                let limit = rate(.post, for: account.user.role)
                let made = MadeInTransaction<HuntView>()
                let keyed = try keyedWrite(request, userID: account.id, made: made) { [clock] (record: HuntRecord) in Self.hosted(record, at: clock.now) }
                for _ in 0 ..< Self.joinCodeDraws {
                    var new = NewHunt(
                        hostID: account.id, name: draft.name, description: draft.description, code: JoinCode.random(), ordered: draft.ordered,
                        isPublic: draft.isPublic, schedule: schedule, rate: limit)
                    new.teamSize = draft.teamSize
                    new.trialSeconds = draft.trialSeconds
                    new.badgeName = draft.badgeName
                    new.guests = draft.guests
                    do {
                        let record = try await charging(.post, limit) { try await store.createHunt(new, request: keyed) }
                        return made.value { Self.hosted(record, at: clock.now) }
                    } catch StoreError.conflict(constraint: "hunts_code") {
                        continue
                    }
                }
                throw StoreError.unexpected("no free join code after \(Self.joinCodeDraws) draws")
            }
        }
    }

    /// What someone who is not a hunt's host hears when they try its host's command: `FORBIDDEN`
    /// when they may read the hunt (anyone, for a public hunt; its players), `NOT_FOUND` when
    /// they may not (so a private hunt does not exist to strangers). Read before the write's
    /// transaction (which checks the host again under its lock): the answer is a refusal either way.
    func hostOnlyRefusal(huntID: String, account: Account, what: String) async throws -> BoardError {
        guard let record = try await store.hunt(id: huntID), record.hostID == account.id || !record.removed else { return Self.noSuchHunt }
        let forbidden = BoardError(.forbidden, "only the hunt's host may \(what)")
        if record.isPublic || record.hostID == account.id { return forbidden }
        return try await store.player(huntID: huntID, userID: account.id) != nil ? forbidden : Self.noSuchHunt
    }

    /// ADDSTOP: a stop at the end of a scheduled hunt; only its host. A code is stored only hashed.
    public func addStop(
        huntID: String, _ draft: StopDraft, by session: Session, request: RequestKey<StopView>? = nil
    ) async throws(BoardError) -> StopView {
        try await replaying(request, by: session) { () async throws(BoardError) -> StopView in
            try guardedNow {
                try Validation.coordinates(lat: draft.lat, lon: draft.lon)
                try Validation.stopRadius(draft.radiusMeters)
                try Validation.stopPoints(draft.points)
                try Validation.stopTitle(draft.title)
                try Validation.clue(draft.clue)
                try Validation.stopProof(draft.proof, code: draft.code)
            }
            return try await guarded {
                let account = try await writer(of: session)
                guard Identifier.isHunt(huntID) else { throw Self.noSuchHunt }
                let refusal = try await hostOnlyRefusal(huntID: huntID, account: account, what: "add stops")
                var codeHash: String?
                if let code = draft.code {
                    codeHash = try await passwords.hash(StopCode.normalized(code), parameters: .claimCodes)
                }
                let new = NewStop(
                    lat: draft.lat, lon: draft.lon, radiusMeters: draft.radiusMeters, points: draft.points, title: draft.title, clue: draft.clue,
                    proof: draft.proof, codeHash: codeHash, hidden: draft.hidden)
                let maximumStops = rules.hunts
                let keyed = try keyedWrite(request, userID: account.id) { (record: StopRecord?) in
                    record.map { StopView(stop: $0.stop, showsPlace: true) }
                }
                guard let record = try await store.addStop(huntID: huntID, new, request: keyed, check: { hunt, now in
                    try Self.rule {
                        try HuntDecisions.hostOnly(hunt, by: account, refusal: refusal)
                        guard hunt.schedule.state(at: now) == .scheduled else {
                            throw BoardError(.conflict, "stops can only be added before the hunt starts")
                        }
                        try maximumStops.checkRoomForStop(holding: hunt.stops)
                    }
                }) else { throw Self.noSuchHunt }
                return StopView(stop: record.stop, showsPlace: true)
            }
        }
    }

    /// REMOVESTOP: only the host, while the hunt is scheduled; later stops move up.
    public func removeStop(id: String, by session: Session, request: RequestKey<Void>? = nil) async throws(BoardError) {
        try await replaying(request, by: session) { () async throws(BoardError) in
            try await guarded {
                let account = try await writer(of: session)
                guard Identifier.isStop(id), let stop = try await store.stop(id: id) else { throw Self.noSuchStop }
                let found = try await hostOnlyRefusal(huntID: stop.stop.hunt, account: account, what: "remove stops")
                let refusal = found.code == .notFound ? Self.noSuchStop : found
                let keyed = try keyedWrite(request, userID: account.id) { (removed: Bool) in removed ? () : nil }
                let removed = try await store.removeStop(id: id, request: keyed) { hunt, now in
                    try Self.rule {
                        try HuntDecisions.hostOnly(hunt, by: account, refusal: refusal)
                        guard hunt.schedule.state(at: now) == .scheduled else {
                            throw BoardError(.conflict, "stops can only be removed before the hunt starts")
                        }
                    }
                }
                guard removed else { throw Self.noSuchStop }
            }
        }
    }

    /// STARTHUNT: the host starts a scheduled hunt now.
    public func startHunt(id: String, by session: Session, request: RequestKey<HuntView>? = nil) async throws(BoardError) -> HuntView {
        try await changeSchedule(id: id, by: session, what: "start it", request: request) { schedule, now, _ in
            (try schedule.started(at: now), nil)
        }
    }

    /// EXTEND: the host moves the end later (see ``HuntSchedule/extended(bySeconds:at:)``).
    public func extendHunt(
        id: String, bySeconds seconds: Int, by session: Session, request: RequestKey<HuntView>? = nil
    ) async throws(BoardError) -> HuntView {
        try guardedNow { try Validation.extendSeconds(seconds) }
        return try await changeSchedule(id: id, by: session, what: "extend it", request: request) { schedule, now, _ in
            (try schedule.extended(bySeconds: seconds, at: now), nil)
        }
    }

    /// ENDHUNT: the host, or a moderator (logged), ends the hunt now.
    public func endHunt(id: String, by session: Session, request: RequestKey<HuntView>? = nil) async throws(BoardError) -> HuntView {
        try await changeSchedule(id: id, by: session, what: "end it", moderatorsToo: true, request: request) { schedule, now, moderator in
            (try schedule.ended(at: now), moderator.map { ($0, "endhunt") })
        }
    }

    private func changeSchedule(
        id: String, by session: Session, what: String, moderatorsToo: Bool = false, request: RequestKey<HuntView>?,
        _ change: @escaping @Sendable (HuntSchedule, Timestamp, Int?) throws -> (HuntSchedule, (moderator: Int, action: String)?)
    ) async throws(BoardError) -> HuntView {
        try await replaying(request, by: session) { () async throws(BoardError) -> HuntView in
            try await guarded {
                let account = try await writer(of: session)
                guard Identifier.isHunt(id) else { throw Self.noSuchHunt }
                let refusal = try await hostOnlyRefusal(huntID: id, account: account, what: what)
                let view: @Sendable (HuntRecord, Timestamp) -> HuntView = { record, now in
                    record.hostID == account.id ? Self.hosted(record, at: now) : HuntView(hunt: record.hunt(at: now), code: nil)
                }
                let made = MadeInTransaction<HuntView>()
                let keyed = try keyedWrite(request, userID: account.id, made: made) { [clock] (record: HuntRecord?) in record.map { view($0, clock.now) } }
                guard let record = try await store.changeSchedule(huntID: id, request: keyed, { hunt, now in
                    try Self.rule {
                        let moderator = try HuntDecisions.scheduleChange(hunt, by: account, moderatorsToo: moderatorsToo, refusal: refusal)
                        let (schedule, log) = try change(hunt.schedule, now, moderator)
                        return (schedule, log)
                    }
                }) else { throw Self.noSuchHunt }
                await applyOwnHuntWrite()
                return made.value { view(record, clock.now) }
            }
        }
    }

    /// HINT: the host sends a hint to a running hunt.
    public func hint(huntID: String, text: String, by session: Session, request: RequestKey<Void>? = nil) async throws(BoardError) {
        try await replaying(request, by: session) { () async throws(BoardError) in
            try checks.text(text)
            try await guarded {
                let account = try await writer(of: session)
                guard Identifier.isHunt(huntID) else { throw Self.noSuchHunt }
                let refusal = try await hostOnlyRefusal(huntID: huntID, account: account, what: "send hints")
                let keyed = try keyedWrite(request, userID: account.id) { (at: Timestamp?) in at.map { _ in () } }
                let replyRate = rate(.reply, for: account.user.role)
                guard try await charging(.reply, replyRate, { try await store.addHint(huntID: huntID, text: text, rate: replyRate, request: keyed, check: { hunt, now in
                    try Self.rule {
                        try HuntDecisions.hostOnly(hunt, by: account, refusal: refusal)
                        guard hunt.schedule.state(at: now) == .running else {
                            throw BoardError(.conflict, "hints can only be sent while the hunt is running")
                        }
                    }
                }) }) != nil else { throw Self.noSuchHunt }
                await applyOwnHuntWrite()
            }
        }
    }

    // MARK: Reading hunts

    /// Who the viewer is to a hunt: its host, a player (with their live and found stops), or neither.
    private struct Relation {
        var isHost: Bool
        var player: (player: PlayerRecord, live: Set<String>, found: [String], team: String?)?
        var isPlayer: Bool { player != nil }
    }

    private func relation(to hunt: HuntRecord, viewer: Int?) async throws -> Relation {
        guard let viewer else { return Relation(isHost: false, player: nil) }
        if hunt.hostID == viewer { return Relation(isHost: true, player: nil) }
        return Relation(isHost: false, player: try await store.player(huntID: hunt.id, userID: viewer))
    }

    /// A hunt the viewer may read: a public one, or a private one they host or play; a removed
    /// one, public or private, only its host (and moderators, when `moderatorsToo`).
    private func readableHunt(_ id: String, viewer: Int?, moderatorsToo: Bool = true, session: Session? = nil) async throws
        -> (HuntRecord, Relation)
    {
        guard Identifier.isHunt(id), let record = try await store.hunt(id: id) else { throw Self.noSuchHunt }
        let relation = try await relation(to: record, viewer: viewer)
        if record.removed, !relation.isHost {
            guard moderatorsToo, let session, await isModerator(session) else { throw Self.noSuchHunt }
        } else if !(record.isPublic || relation.isHost || relation.isPlayer) { throw Self.noSuchHunt }
        return (record, relation)
    }

    /// Whether the session's user is a moderator or admin who is not banned, as the database says now.
    func isModerator(_ session: Session) async -> Bool {
        guard session.login != nil else { return false }
        do {
            _ = try await moderator(of: session)
            return true
        } catch {
            return false
        }
    }

    /// HUNT: the hunt, the stops this viewer may see, hints, their standing and the winners.
    public func hunt(id: String, viewer session: Session) async throws(BoardError) -> HuntDetails {
        try await guarded {
            let (record, relation) = try await readableHunt(id, viewer: try await checkedViewerID(of: session), session: session)
            let now = clock.now
            let state = record.schedule.state(at: now)
            let stopRecords = try await store.stops(huntID: record.id)
            let withheld = Set(stopRecords.filter(\.withheld).map(\.stop.id))
            let stops = stopRecords.map(\.stop)
            let found = Set(relation.player?.found ?? [])
            let live = relation.player?.live ?? []
            var shown: [HuntStop]
            if relation.isHost {
                shown = stops
            } else if state == .scheduled {
                shown = []
            } else if record.ordered {
                if relation.isPlayer {
                    let next = stops.first { !live.contains($0.id) }
                    shown = stops.filter { live.contains($0.id) || $0.id == next?.id }
                } else {
                    shown = Array(stops.prefix(1))
                }
            } else {
                shown = stops
            }
            var seesWithheld = relation.isHost
            if !seesWithheld, !withheld.isEmpty { seesWithheld = await isModerator(session) }
            let views = shown.map { stop in
                var view = StopView(stop: stop, showsPlace: !stop.hidden || relation.isHost || found.contains(stop.id))
                if withheld.contains(stop.id), !seesWithheld {
                    view.stop.title = ""
                    view.stop.clue = ""
                }
                return view
            }
            let hints = try await store.hints(huntID: record.id).map { HuntHint(text: $0.text, at: $0.at) }
            var me: PlayerStanding?
            if let player = relation.player {
                let board = try await leaderboard(of: record.id)
                if let team = player.team {
                    // A team hunt: the team's standing (its board is of teams).
                    me = PlayerStanding(
                        points: board.standing(of: team)?.points ?? 0, found: player.found, rank: board.rank(of: team) ?? board.count + 1,
                        team: team)
                } else {
                    me = PlayerStanding(
                        points: player.player.points, found: player.found, rank: board.rank(of: player.player.name) ?? board.count)
                }
            }
            let winners = state == .ended ? try await store.finishers(huntID: record.id) : []
            let view = relation.isHost ? Self.hosted(record, at: now) : HuntView(hunt: record.hunt(at: now), code: nil)
            return HuntDetails(view: view, stops: views, hints: hints, me: me, winners: winners)
        }
    }

    /// HUNTS: public hunts that have not ended (running first), or with `mine` the caller's own
    /// hunts (hosted or played, any state), newest first.
    public func hunts(
        mine: Bool, near: (lat: Double, lon: Double, radius: Double)?, limit: Int, cursor: String?, viewer session: Session
    ) async throws(BoardError) -> HuntPage {
        if let near {
            try checks.circle(lat: near.lat, lon: near.lon, radius: near.radius)
        }
        return try await guarded {
            let now = clock.now
            if mine {
                guard let viewer = try await checkedViewerID(of: session) else { throw BoardError(.unauthorized, "log in first (REGISTER, LOGIN or AUTH)") }
                var after: (created: Timestamp, id: String)?
                if let cursor {
                    guard let parsed = HuntCursors.mine(cursor) else { throw BoardError(.badArgument, "CURSOR is not a cursor of this list") }
                    after = parsed
                }
                let records = try await store.hunts(of: viewer, limit: limit, after: after)
                let page = records.prefix(limit)
                let views = page.map { $0.hostID == viewer ? Self.hosted($0, at: now) : HuntView(hunt: $0.hunt(at: now), code: nil) }
                let next = records.count > limit ? page.last.map { HuntCursors.mine(created: $0.created, id: $0.id) } : nil
                return HuntPage(hunts: views, next: next)
            }
            var after: HuntListCursor?
            if let cursor {
                guard let parsed = HuntCursors.list(cursor, near: near != nil) else {
                    throw BoardError(.badArgument, "CURSOR is not a cursor of this list")
                }
                after = parsed
            }
            let rows = try await store.publicHunts(limit: limit, after: after, near: near)
            let page = rows.prefix(limit)
            let viewer = page.contains { $0.hunt.hostID == Self.viewerID(session) } ? try await checkedViewerID(of: session) : nil
            let views = page.map { row in
                row.hunt.hostID == viewer ? Self.hosted(row.hunt, at: now) : HuntView(hunt: row.hunt.hunt(at: now), code: nil)
            }
            let next = rows.count > limit ? page.last.map { HuntCursors.list($0.key, near: near != nil) } : nil
            return HuntPage(hunts: views, next: next)
        }
    }

    // MARK: The chat

    static let chatMembersOnly = BoardError(.forbidden, "only the hunt's host and players may use its chat")

    /// REPLY on a hunt: a message in its chat, for its host and players.
    func huntReply(to huntID: String, text: String, by session: Session, request: RequestKey<PinReply>?) async throws(BoardError) -> PinReply {
        try await guarded {
            let account = try await player(of: session)
            let limit = rate(.reply, for: account.user.role)
            let keyed = try keyedWrite(request, userID: account.id) { (reply: PinReply?) in reply }
            guard let reply = try await charging(.reply, limit, {
                try await store.createHuntReply(
                    huntID: huntID, authorID: account.id, authorName: account.user.name, text: text, rate: limit, request: keyed,
                    check: { hunt, member in
                        try Self.rule { try HuntDecisions.chat(hunt, member: member, by: account) }
                    })
            }) else { throw Self.noSuchHunt }
            await applyOwnHuntWrite()
            return reply
        }
    }

    /// REPLIES on a hunt: a page of its chat, for its host and players.
    func huntReplies(to huntID: String, after cursor: ReplyCursor?, limit: Int, viewer session: Session) async throws(BoardError)
        -> (replies: [PinReply], next: ReplyCursor?)
    {
        try await guarded {
            let (record, relation) = try await readableHunt(huntID, viewer: try await checkedViewerID(of: session), moderatorsToo: false)
            guard relation.isHost || relation.isPlayer else { throw record.isPublic ? Self.chatMembersOnly : Self.noSuchHunt }
            return try await store.huntReplies(huntID: huntID, after: cursor, limit: limit)
        }
    }

    // MARK: Leaderboards

    /// A hunt's leaderboard, in memory (``HuntFeed``), with this daemon's own writes applied when
    /// `afterOwnWrite`: a reply that shows a rank includes the write it answers.
    func leaderboard(of huntID: String, afterOwnWrite: Bool = false) async throws -> Leaderboard {
        if afterOwnWrite { await applyOwnHuntWrite() }
        return try await feed.hunts.leaderboard(of: huntID)
    }

    /// Applies the hunts' change log after a committed write, so this daemon's leaderboards and
    /// watchers have it before the reply goes out. A failure here does not fail the write (it is
    /// committed); the listener applies it when the database answers again.
    func applyOwnHuntWrite() async {
        do {
            try await feed.hunts.catchUp()
        } catch {
            logger.debug("hunt changes not applied after a write; the listener will", metadata: ["error": "\(error)"])
        }
    }

    /// LEADERBOARD: a page of a hunt's leaderboard, after a cursor or around the caller.
    public func leaderboard(huntID: String, limit: Int, cursor: String?, around: Bool, viewer session: Session) async throws(BoardError)
        -> (entries: [LeaderboardEntry], next: String?)
    {
        try await guarded {
            // Unless it is a public board read without AROUND, the answer depends on who asks: checked first.
            let publicBoard = !around && Identifier.isHunt(huntID) && feed.hunts.access(to: huntID, viewer: nil).map { $0.isPublic && !$0.removed } == true
            let viewer = publicBoard ? Self.viewerID(session) : try await memoryBackedViewerID(of: session)
            // Who may read it and who the caller is in it, from memory when the hunt's board is
            // kept (no read of the database). The database decides what memory cannot yet
            // know: a removed hunt (moderators), and a caller memory does not know as a player
            // where that matters (a refusal, or AROUND), who may have joined on another daemon a
            // moment ago.
            let known = Identifier.isHunt(huntID) ? feed.hunts.access(to: huntID, viewer: viewer) : nil
            let memoryDecides = known.map { known in
                !known.removed && (known.playerName != nil || known.hostID == viewer || (known.isPublic && !(around && viewer != nil)))
            } ?? false
            // The caller's entry: in a team hunt, their team's.
            let playerName: String?
            if let known, memoryDecides {
                playerName = known.teamName ?? known.playerName
            } else {
                let (_, relation) = try await readableHunt(huntID, viewer: viewer, session: session)
                playerName = relation.player.map { $0.team ?? $0.player.name }
            }
            var after: LeaderboardPosition?
            if let cursor {
                guard let parsed = LeaderboardCursor(encoded: cursor), parsed.belongs(to: huntID) else {
                    throw BoardError(.badArgument, "CURSOR is not a cursor of this leaderboard")
                }
                after = parsed.position
            }
            let board = try await leaderboard(of: huntID)
            let page: LeaderboardPage
            if around {
                page = board.page(around: playerName ?? "", limit: limit)
            } else {
                page = board.page(after: after, limit: limit)
            }
            return (page.entries, page.next.map { LeaderboardCursor(scope: huntID, position: $0).encoded })
        }
    }
}
