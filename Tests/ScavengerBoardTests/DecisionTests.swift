@testable import ScavengerBoard
import ScavengerCore
import ScavengerStore
import Testing

/// The board's decisions without a database: each rule from the facts the store reads to a
/// refusal or a verdict. (End-to-end tests over TCP cover the same rules once each.)
@Suite("Decisions: who may delete, report, claim, resolve, release and ban")
struct DecisionTests {
    static func account(_ id: Int, _ role: Role) -> Account {
        Account(id: id, user: User(name: "user\(id)", role: role))
    }

    static let user = account(1, .user)
    static let moderator = account(2, .moderator)
    static let otherModerator = account(3, .moderator)
    static let admin = account(4, .admin)

    /// The refusal's code and words, or nil when the decision allows it.
    static func refusal(_ decide: () throws(BoardError) -> Void) -> String? {
        do {
            try decide()
            return nil
        } catch {
            return "\(error.code) \(error.message)"
        }
    }

    @Test("DELETE: the author's own, a moderator's of another's (audited), nobody else's", arguments: [
        (1, user, "byAuthor"), (1, moderator, "byModerator"), (2, moderator, "byAuthor"), (9, admin, "byModerator"),
        (9, user, "forbidden only the author or a moderator may delete this pin"),
    ] as [(Int, Account, String)])
    func delete(author: Int, by account: Account, expected: String) {
        do {
            let verdict = try Board.deletion(of: PinDeleteFacts(authorID: author), by: account)
            #expect("\(verdict)" == expected)
        } catch {
            #expect("\(error.code) \(error.message)" == expected)
        }
    }

    @Test("REPORT: not there, one's own, twice", arguments: [
        (ReportFacts(authorID: 9, alreadyReported: false), nil),
        (nil, "notFound no such pin, reply, hunt or stop"),
        (ReportFacts(authorID: 1, alreadyReported: false), "forbidden you cannot report your own content"),
        (ReportFacts(authorID: 1, alreadyReported: true), "forbidden you cannot report your own content"),
        (ReportFacts(authorID: 9, alreadyReported: true), "conflict you have already reported this"),
    ] as [(ReportFacts?, String?)])
    func report(facts: ReportFacts?, expected: String?) {
        #expect(Self.refusal { () throws(BoardError) in try ModerationDecisions.report(facts, by: Self.user) } == expected)
    }

    static func item(_ status: ItemStatus, holder: Int? = nil, live: Bool = false, author: Int? = 9) -> QueueItemFacts {
        QueueItemFacts(authorID: author, status: status, holderID: holder, claimLive: live)
    }

    @Test("CLAIM: open, expired or one's own claim; not resolved, not another's live claim, not one's own content", arguments: [
        (item(.open), nil), (item(.claimed, holder: 3, live: false), nil), (item(.claimed, holder: 2, live: true), nil),
        (item(.claimed, holder: 3, live: true), "conflict another moderator holds that item"),
        (item(.resolved), "conflict that item is already resolved"),
        (item(.open, author: 2), "forbidden you cannot moderate your own content"),
        (item(.resolved, author: 2), "forbidden you cannot moderate your own content"),
    ] as [(QueueItemFacts, String?)])
    func claim(facts: QueueItemFacts, expected: String?) {
        #expect(Self.refusal { () throws(BoardError) in try ModerationDecisions.claim(facts, by: Self.moderator) } == expected)
        #expect(Self.refusal { () throws(BoardError) in try ModerationDecisions.claim(nil, by: Self.moderator) }
            == "notFound no such item in the queue")
    }

    @Test("RESOLVE: the live claim's holder or an admin; never resolved twice, never one's own content", arguments: [
        (item(.claimed, holder: 2, live: true), moderator, nil),
        (item(.claimed, holder: 2, live: false), moderator, "forbidden only the moderator holding the claim, or an admin, may resolve it"),
        (item(.claimed, holder: 3, live: true), moderator, "forbidden only the moderator holding the claim, or an admin, may resolve it"),
        (item(.open), moderator, "forbidden only the moderator holding the claim, or an admin, may resolve it"),
        (item(.open), admin, nil), (item(.claimed, holder: 3, live: true), admin, nil),
        (item(.resolved), admin, "conflict that item is already resolved"),
        (item(.open, author: 4), admin, "forbidden you cannot moderate your own content"),
    ] as [(QueueItemFacts, Account, String?)])
    func resolve(facts: QueueItemFacts, by account: Account, expected: String?) {
        #expect(Self.refusal { () throws(BoardError) in try ModerationDecisions.resolve(facts, by: account) } == expected)
    }

    @Test("RELEASE: only the live claim's holder", arguments: [
        (item(.claimed, holder: 2, live: true), nil),
        (item(.claimed, holder: 2, live: false), "conflict you hold no claim on that item"),
        (item(.claimed, holder: 3, live: true), "conflict you hold no claim on that item"),
        (item(.open), "conflict you hold no claim on that item"),
    ] as [(QueueItemFacts, String?)])
    func release(facts: QueueItemFacts, expected: String?) {
        #expect(Self.refusal { () throws(BoardError) in try ModerationDecisions.release(facts, by: Self.moderator) } == expected)
    }

    @Test("BAN: moderators ban users; admins anyone; an admin's ban only by an admin; nobody themselves by name", arguments: [
        (BanTargetFacts(userID: 1, role: .user, bannedByAdmin: false), moderator, true, nil),
        (BanTargetFacts(userID: 1, role: .user, bannedByAdmin: true), moderator, true,
         "forbidden an admin banned this user; only an admin may lift or change that ban"),
        (BanTargetFacts(userID: 3, role: .moderator, bannedByAdmin: false), moderator, true,
         "forbidden only an admin may ban a moderator or an admin"),
        (BanTargetFacts(userID: 3, role: .moderator, bannedByAdmin: true), admin, true, nil),
        (BanTargetFacts(userID: 2, role: .moderator, bannedByAdmin: false), moderator, true, "forbidden you cannot ban or unban yourself"),
        (BanTargetFacts(userID: 4, role: .admin, bannedByAdmin: false), admin, true, "forbidden you cannot ban or unban yourself"),
        (BanTargetFacts(userID: 4, role: .admin, bannedByAdmin: false), admin, false, nil),
    ] as [(BanTargetFacts, Account, Bool, String?)])
    func ban(facts: BanTargetFacts, by account: Account, byName: Bool, expected: String?) {
        #expect(Self.refusal { () throws(BoardError) in try ModerationDecisions.ban(facts, by: account, byName: byName) } == expected)
        #expect(Self.refusal { () throws(BoardError) in try ModerationDecisions.ban(nil, by: account, byName: byName) }
            == "notFound no such user")
    }
}
