import ScavengerCore
import ScavengerStore

extension Board {
    /// Reports a pin, a reply (under a pin or in a hunt's chat), a hunt or a stop. When its distinct reporters reach the threshold it is hidden,
    /// in the store and then in the feed.
    public func report(
        _ item: String, reason: ReportReason, note: String?, by session: Session, request: RequestKey<FiledReport>? = nil
    ) async throws(BoardError) -> FiledReport {
        try await replaying(request, by: session) { () async throws(BoardError) -> FiledReport in
            try checks.note(note)
            return try await guarded {
                let reporter = try await player(of: session)
                let limit = rate(.report, for: reporter.user.role)
                let keyed = try keyedWrite(request, userID: reporter.id) { (receipt: ReportReceipt) in
                    FiledReport(id: receipt.reportID, item: receipt.item)
                }
                let receipt = try await charging(.report, limit) {
                    try await store.report(
                        reporter: reporter, item: item, reason: reason, note: note, rules: rules.moderation, rate: limit, request: keyed
                    ) { facts in try ModerationDecisions.report(facts, by: reporter) }
                }
                await refreshFeed(gone: receipt.hidNow && Identifier.isPin(item) ? item : nil)
                return FiledReport(id: receipt.reportID, item: receipt.item)
            }
        }
    }

    /// Moderators: queue items with the given status (nil: all), most-reported first, then oldest.
    public func moderationQueue(status: ItemStatus?, limit: Int, by session: Session) async throws(BoardError) -> [ModerationItem] {
        return try await guarded {
            _ = try await moderator(of: session)
            return try await store.moderationQueue(status: status, limit: limit)
        }
    }

    /// Moderators: a page of the queue, filtered by status (nil: all) and reason (nil: any),
    /// each item with its reports (for the reporters' account ages).
    public func moderationQueue(
        status: ItemStatus?, reason: ReportReason?, limit: Int, offset: Int, by session: Session
    ) async throws(BoardError) -> [(item: ModerationItem, reports: [ItemReport])] {
        return try await guarded {
            _ = try await moderator(of: session)
            var page: [(item: ModerationItem, reports: [ItemReport])] = []
            for item in try await store.moderationQueue(status: status, reason: reason, limit: limit, offset: offset) {
                page.append((item, try await store.itemReports(item.item)))
            }
            return page
        }
    }

    /// Moderators: one item with everything a decision needs: its reports (with the reporters'
    /// account ages) and its author's history. `notFound` when there is no such item.
    public func review(_ item: String, by session: Session) async throws(BoardError) -> ItemReview {
        return try await guarded {
            _ = try await moderator(of: session)
            guard let found = try await store.moderationItem(item) else {
                throw BoardError(.notFound, "no such item in the queue")
            }
            return ItemReview(
                item: found, reports: try await store.itemReports(item), author: try await store.authorHistory(ofItem: item))
        }
    }

    /// Moderators: the evidence photo kept for an item (nil when none is kept), or a JPEG of it
    /// at `size` (the console's queue shows thumbnails).
    public func evidencePhoto(_ item: String, by session: Session, size: PhotoSize? = nil) async throws(BoardError) -> Photo? {
        let photo = try await guarded {
            _ = try await moderator(of: session)
            return try await store.evidencePhoto(item: item)
        }
        // A size is made on the spot: the copy is kept for a few moderators, not for a feed. One
        // that cannot be made is answered with the copy itself.
        guard let photo, let size, let resized = await photoSizes.resized(photo.data, to: size) else { return photo }
        return Photo(mime: "image/jpeg", data: resized)
    }

    /// Moderators: hands back a claim they hold (`conflict` when they hold none on it).
    public func release(_ item: String, by session: Session) async throws(BoardError) -> ModerationItem {
        return try await guarded {
            let moderator = try await moderator(of: session)
            return try await store.release(moderator: moderator, item: item) { facts in
                try ModerationDecisions.release(facts, by: moderator)
            }
        }
    }

    /// Moderators: claims that item, or the next open one (nil when none is open); never an
    /// item on their own content (`forbidden` when named, skipped otherwise).
    public func claim(_ item: String?, by session: Session, request: RequestKey<ModerationItem?>? = nil) async throws(BoardError)
        -> ModerationItem?
    {
        try await replaying(request, by: session) { () async throws(BoardError) -> ModerationItem? in
            return try await guarded {
                let moderator = try await moderator(of: session)
                let keyed = try keyedWrite(request, userID: moderator.id) { (claimed: ModerationItem?) in
                    ModerationItem??.some(claimed)
                }
                return try await store.claim(moderator: moderator, item: item, claimSeconds: rules.moderation.claimSeconds, request: keyed) {
                    facts in try ModerationDecisions.claim(facts, by: moderator)
                }
            }
        }
    }

    /// The claim holder (or an admin) decides an item, never on their own content; the feed
    /// follows (shown again, or gone). A ban without a length lasts the configured default; a
    /// moderator's ban of an author under an admin's ban is `forbidden`.
    public func resolve(
        _ item: String, as resolution: Resolution, ban: BanLength?, note: String?, by session: Session,
        request: RequestKey<ModerationItem>? = nil
    ) async throws(BoardError) -> ModerationItem {
        try await replaying(request, by: session) { () async throws(BoardError) -> ModerationItem in
            try checks.note(note)
            try checks.ban(ban)
            return try await guarded {
                let moderator = try await moderator(of: session)
                let ban = ban ?? .seconds(rules.moderation.defaultBanSeconds)
                let keyed = try keyedWrite(request, userID: moderator.id) { (outcome: ResolveOutcome) in outcome.item }
                let outcome = try await store.resolve(
                    moderator: moderator, item: item, resolution: resolution, ban: ban, note: note, request: keyed,
                    decide: { facts in try ModerationDecisions.resolve(facts, by: moderator) },
                    decideBan: { facts in try ModerationDecisions.ban(facts, by: moderator, byName: false) })
                await refreshFeed(gone: outcome.removedPin)
                if Identifier.isHunt(item) { await applyOwnHuntWrite() }
                return outcome.item
            }
        }
    }

    /// Moderators: bans a user by name (`ban` non-nil) or lifts their ban (nil); not themselves,
    /// and a ban an admin set only by an admin.
    public func setBan(
        of username: String, to ban: BanLength?, note: String?, by session: Session, request: RequestKey<Void>? = nil
    ) async throws(BoardError) {
        try await replaying(request, by: session) { () async throws(BoardError) in
            try checks.note(note)
            try checks.ban(ban)
            try await guarded {
                let moderator = try await moderator(of: session)
                let keyed = try keyedWrite(request, userID: moderator.id) { () in () }
                try await store.setBan(moderator: moderator, username: username, ban: ban, note: note, request: keyed) { facts in
                    try ModerationDecisions.ban(facts, by: moderator, byName: true)
                }
            }
        }
    }

    /// Moderators: the log of moderator actions, newest first, before the cursor `before`.
    public func moderationLog(limit: Int, before: Int?, by session: Session) async throws(BoardError)
        -> (entries: [ModerationLogEntry], next: Int?)
    {
        return try await guarded {
            _ = try await moderator(of: session)
            return try await store.moderationLog(limit: limit, before: before)
        }
    }

    /// Brings the feed in line after moderation changed pins; if the change log cannot be read
    /// just now, at least a pin that must no longer be seen (`gone`) leaves the feed at once.
    private func refreshFeed(gone: String?) async {
        await feed.applyOwnWrite { feed in
            if let gone { feed.remove(id: gone) }
        }
    }
}

/// A report the board accepted: its id and the item it is about.
public struct FiledReport: Sendable, Equatable, Codable {
    public var id: String
    public var item: String
}

/// An item under review: the item, its reports, its author's history (nil when the account is gone).
public struct ItemReview: Sendable {
    public var item: ModerationItem
    public var reports: [ItemReport]
    public var author: AuthorHistory?
}
