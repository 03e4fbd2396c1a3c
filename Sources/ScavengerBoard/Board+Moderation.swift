import ScavengerCore
import ScavengerStore

extension Board {
    /// Reports a pin or reply. When its distinct reporters reach the threshold it is hidden,
    /// in the store and then in the feed.
    public func report(_ item: String, reason: ReportReason, note: String?, by session: Session) async throws -> ReportReceipt {
        let reporter = try await writer(of: session)
        let limit = rate(.report, for: reporter.user.role)
        let receipt = try await charging(.report, limit) {
            try await refusing {
                try await store.report(reporter: reporter, item: item, reason: reason, note: note, rules: rules.moderation, rate: limit)
            }
        }
        await refreshFeed(gone: receipt.hidNow && Identifier.isPin(item) ? item : nil)
        return receipt
    }

    /// Moderators: queue items with the given status (nil: all), most-reported first, then oldest.
    public func moderationQueue(status: ItemStatus?, limit: Int, by session: Session) async throws -> [ModerationItem] {
        _ = try await moderator(of: session)
        return try await store.moderationQueue(status: status, limit: limit)
    }

    /// Moderators: claims that item, or the next open one (nil when none is open); never an
    /// item on their own content (`forbidden` when named, skipped otherwise).
    public func claim(_ item: String?, by session: Session) async throws -> ModerationItem? {
        let moderator = try await moderator(of: session)
        return try await refusing {
            try await store.claim(moderator: moderator, item: item, claimSeconds: rules.moderation.claimSeconds)
        }
    }

    /// The claim holder (or an admin) decides an item, never on their own content; the feed
    /// follows (shown again, or gone). A ban without a length lasts the configured default; a
    /// moderator's ban of an author under an admin's ban is `forbidden`.
    public func resolve(
        _ item: String, as resolution: Resolution, ban: BanLength?, note: String?, by session: Session
    ) async throws -> ModerationItem {
        let moderator = try await moderator(of: session)
        let ban = ban ?? .seconds(rules.moderation.defaultBanSeconds)
        let outcome = try await refusing {
            try await store.resolve(moderator: moderator, item: item, resolution: resolution, ban: ban, note: note)
        }
        await refreshFeed(gone: outcome.removedPin)
        return outcome.item
    }

    /// Moderators: bans a user by name (`ban` non-nil) or lifts their ban (nil); not themselves,
    /// and a ban an admin set only by an admin.
    public func setBan(of username: String, to ban: BanLength?, note: String?, by session: Session) async throws {
        let moderator = try await moderator(of: session)
        try await refusing {
            try await store.setBan(moderator: moderator, username: username, ban: ban, note: note)
        }
    }

    /// Moderators: the log of moderator actions, newest first, before the cursor `before`.
    public func moderationLog(limit: Int, before: Int?, by session: Session) async throws
        -> (entries: [ModerationLogEntry], next: Int?)
    {
        _ = try await moderator(of: session)
        return try await store.moderationLog(limit: limit, before: before)
    }

    /// Runs a store call, turning its refusals into ``Refusal``s.
    private func refusing<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let refusal as ModerationRefusal {
            switch refusal {
            case .notFound(let message): throw Refusal(.notFound, message)
            case .forbidden(let message): throw Refusal(.forbidden, message)
            case .conflict(let message): throw Refusal(.conflict, message)
            }
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
