import ScavengerCore
import ScavengerStore

/// A pin to post: a text, or a photo with a caption.
public struct PinDraft: Sendable {
    public var lat: Double
    public var lon: Double
    /// The message, or the photo's caption (may be empty then).
    public var text: String
    public var ttlSeconds: Int
    public var photo: Photo?

    public init(lat: Double, lon: Double, text: String, ttlSeconds: Int, photo: Photo? = nil) {
        self.lat = lat
        self.lon = lon
        self.text = text
        self.ttlSeconds = ttlSeconds
        self.photo = photo
    }
}

extension Board {
    static let noSuchPin = BoardError(.notFound, "no such pin")

    /// Writes a pin, then puts it in the feed before returning, so the writer's next NEARBY
    /// sees it. The session is checked by the writing statement itself (one round trip, and no
    /// gap between the check and the write); only when it refuses is the account read, to say
    /// why.
    /// With a `request` key, the pin is written alone with its key and reply in its transaction.
    public func post(_ draft: PinDraft, by session: Session, request: RequestKey<Pin>? = nil) async throws(BoardError) -> Pin {
        // A photo's sizes are made in the background once it is written.
        defer { if draft.photo != nil { photoSizes.wake() } }
        return try await replaying(request, by: session) { () async throws(BoardError) -> Pin in
            try checks.pin(draft)
            return try await guarded {
                let login = try login(of: session)
                try Self.refuseGuest(login.user, guestHunt: nil)
                // The pin's region comes from the feed's regions: none before they are loaded.
                try requireLoadedFeed()
                let draft = try draft.withPhotoMetadataRemoved(limits: rules.pins.pixelLimits)
                let action: RateLimitedAction = draft.photo == nil ? .post : .photo
                var new = NewPin(
                    authorID: login.userID, authorName: login.user.name, lat: draft.lat, lon: draft.lon, text: draft.text,
                    ttlSeconds: draft.ttlSeconds, photo: draft.photo,
                    cell: Int64(Grid.cell(lat: draft.lat, lon: draft.lon, level: 0).rawValue),
                    region: feed.region(lat: draft.lat, lon: draft.lon), sessionTokenHash: login.tokenHash,
                    rate: rate(action, for: login.user.role))
                return try await feed.writeOwnPin(id: new.id) {
                    try await charging(action, new.rate) {
                        let made = MadeInTransaction<Pin>()
                        do {
                            return try await store.createPin(new, request: keyedWrite(request, userID: new.authorID, made: made) { $0 })
                        } catch StoreError.sessionRefused {
                            // Unauthorized or banned, with the reason; if the session checks out by now (a
                            // ban ended in between), the write is tried once more, still checked.
                            let account = try await writer(of: session)
                            new.authorID = account.id
                            new.authorName = account.user.name
                            new.rate = rate(action, for: account.user.role)
                            return try await store.createPin(new, request: keyedWrite(request, userID: new.authorID, made: made) { $0 })
                        }
                    }
                }
            }
        }
    }

    /// A live, visible pin.
    public func pin(id: String) async throws(BoardError) -> Pin {
        return try await guarded {
            guard Identifier.isPin(id), let pin = try await store.pin(id: id) else { throw Self.noSuchPin }
            return pin
        }
    }

    /// A live photo pin's image. Moderators also see the kept photo of a reported pin while its
    /// item is open; a banned one is told so (`banned`) instead.
    public func photo(pinID id: String, viewer session: Session) async throws(BoardError) -> Photo {
        return try await guarded {
            var found = Identifier.isPin(id) ? try await store.photo(pinID: id) : nil
            if found == nil, Identifier.isPin(id), session.user?.role.canModerate == true {
                let moderator: Account?
                do {
                    moderator = try await self.moderator(of: session)
                } catch let refusal as BoardError where refusal.code == .banned {
                    throw refusal
                } catch {
                    moderator = nil
                }
                if moderator != nil { found = try await store.evidencePhoto(item: id) }
            }
            guard let found else { throw BoardError(.notFound, "no such photo pin") }
            return found
        }
    }

    /// Deletes a pin with its replies and photo: only its author or a moderator. Gone from the
    /// feed before this returns. A moderator's delete of someone else's pin is audited (log entry
    /// and evidence snapshot) in the same transaction; an author's own is not.
    public func delete(pinID id: String, by session: Session, request: RequestKey<Void>? = nil) async throws(BoardError) {
        try await replaying(request, by: session) { () async throws(BoardError) in
            try await guarded {
                let account = try await writer(of: session)
                guard Identifier.isPin(id) else { throw Self.noSuchPin }
                let keyed = try keyedWrite(request, userID: account.id) { (deleted: Bool) in deleted ? () : nil }
                let deleted = try await store.deletePin(id: id, by: account.id, request: keyed) { facts in
                    try Self.deletion(of: facts, by: account)
                }
                guard deleted else { throw Self.noSuchPin }
                await feed.applyOwnWrite { $0.remove(id: id) }
            }
        }
    }

    /// Who may delete a pin: its author, or a moderator (whose delete of another's pin is audited).
    static func deletion(of facts: PinDeleteFacts, by account: Account) throws(BoardError) -> PinDeletion {
        if facts.authorID == account.id { return .byAuthor }
        guard account.user.role.canModerate else { throw BoardError(.forbidden, "only the author or a moderator may delete this pin") }
        return .byModerator
    }

    /// Adds a message to the chat under a live pin; the pin's reply count in the feed follows.
    public func reply(
        to pinID: String, text: String, by session: Session, request: RequestKey<PinReply>? = nil
    ) async throws(BoardError) -> PinReply {
        try await replaying(request, by: session) { () async throws(BoardError) -> PinReply in
            try checks.text(text)
            if Identifier.isHunt(pinID) { return try await huntReply(to: pinID, text: text, by: session, request: request) }
            return try await guarded {
                let account = try await writer(of: session)
                let limit = rate(.reply, for: account.user.role)
                let keyed = try keyedWrite(request, userID: account.id) { (reply: PinReply) in reply }
                guard Identifier.isPin(pinID),
                      let reply = try await charging(.reply, limit, {
                          try await store.createReply(
                              pinID: pinID, authorID: account.id, authorName: account.user.name, text: text, rate: limit, request: keyed)
                      })
                else { throw Self.noSuchPin }
                await feed.applyOwnWrite { $0.replyAdded(pinID: pinID) }
                return reply
            }
        }
    }

    /// A page of the chat under a live pin, oldest first.
    public func replies(to pinID: String, after cursor: ReplyCursor?, limit: Int, viewer session: Session) async throws(BoardError)
        -> (replies: [PinReply], next: ReplyCursor?)
    {
        if Identifier.isHunt(pinID) { return try await huntReplies(to: pinID, after: cursor, limit: limit, viewer: session) }
        return try await guarded {
            guard Identifier.isPin(pinID), let page = try await store.replies(pinID: pinID, after: cursor, limit: limit) else {
                throw Self.noSuchPin
            }
            return page
        }
    }
}
