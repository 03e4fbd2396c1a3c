import ScavengerCore
import ScavengerStore

/// Who may do what in moderation: pure functions from the facts the store reads under its locks
/// to a refusal (a ``BoardError``) or nothing; the store applies what they allow in the same
/// transaction. Each is unit-tested with a table of cases beside the end-to-end tests.
enum ModerationDecisions {
    static let noSuchContent = BoardError(.notFound, "no such pin, reply, hunt or stop")
    static let noSuchItem = BoardError(.notFound, "no such item in the queue")
    static let noSuchUser = BoardError(.notFound, "no such user")

    /// `REPORT`: anything there but one's own content, once per reporter.
    static func report(_ facts: ReportFacts?, by reporter: Account) throws(BoardError) {
        guard let facts else { throw noSuchContent }
        if let guestHunt = reporter.guestHunt {
            do throws(GameRefusal) {
                try GameRules.guestMay(facts.hunt.map { .play(hunt: $0) } ?? .other, guestHunt: guestHunt)
            } catch {
                throw BoardError(error)
            }
        }
        if facts.authorID == reporter.id { throw BoardError(.forbidden, "you cannot report your own content") }
        if facts.alreadyReported { throw BoardError(.conflict, "you have already reported this") }
    }

    /// `CLAIM item`: an item not resolved, not held by another moderator's live claim, and not
    /// on the moderator's own content.
    static func claim(_ facts: QueueItemFacts?, by moderator: Account) throws(BoardError) {
        guard let facts else { throw noSuchItem }
        try notOwn(facts, by: moderator)
        if facts.status == .resolved { throw BoardError(.conflict, "that item is already resolved") }
        if facts.status == .claimed, facts.claimLive, facts.holderID != moderator.id {
            throw BoardError(.conflict, "another moderator holds that item")
        }
    }

    /// `RESOLVE`: the moderator holding the item's live claim, or an admin; never on their own
    /// content, never twice.
    static func resolve(_ facts: QueueItemFacts?, by moderator: Account) throws(BoardError) {
        guard let facts else { throw noSuchItem }
        try notOwn(facts, by: moderator)
        if facts.status == .resolved { throw BoardError(.conflict, "that item is already resolved") }
        guard holds(facts, moderator) || moderator.user.role == .admin else {
            throw BoardError(.forbidden, "only the moderator holding the claim, or an admin, may resolve it")
        }
    }

    /// `RELEASE`: only the holder of a live claim hands it back.
    static func release(_ facts: QueueItemFacts?, by moderator: Account) throws(BoardError) {
        guard let facts else { throw noSuchItem }
        guard holds(facts, moderator) else { throw BoardError(.conflict, "you hold no claim on that item") }
    }

    /// A ban or an unban (`BAN`, `UNBAN`, `RESOLVE … ban`): moderators ban users; only admins
    /// ban moderators or admins, and only admins lift, shorten or replace a ban an admin set
    /// while it lasts. `byName`: a `BAN`/`UNBAN`, which nobody aims at themselves.
    static func ban(_ facts: BanTargetFacts?, by moderator: Account, byName: Bool) throws(BoardError) {
        guard let facts else { throw noSuchUser }
        if byName, facts.userID == moderator.id { throw BoardError(.forbidden, "you cannot ban or unban yourself") }
        guard moderator.user.role != .admin else { return }
        if facts.role != .user { throw BoardError(.forbidden, "only an admin may ban a moderator or an admin") }
        if facts.bannedByAdmin {
            throw BoardError(.forbidden, "an admin banned this user; only an admin may lift or change that ban")
        }
    }

    /// Nobody, admins included, claims or resolves a report on their own content.
    private static func notOwn(_ facts: QueueItemFacts, by moderator: Account) throws(BoardError) {
        if facts.authorID == moderator.id { throw BoardError(.forbidden, "you cannot moderate your own content") }
    }

    private static func holds(_ facts: QueueItemFacts, _ moderator: Account) -> Bool {
        facts.status == .claimed && facts.claimLive && facts.holderID == moderator.id
    }
}
