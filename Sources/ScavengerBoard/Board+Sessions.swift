import ScavengerCore
import ScavengerFeed
import ScavengerStore
import Synchronization

// Sessions that end everywhere (protocol 1.5): a LOGOUT ends its session on every connection
// that resumed it, a RESET every session of the user, on every daemon. A read of what only a
// login may see checks its session in the database (``checkedViewer(of:)``), so the connection
// is answered as one with no login from its next command; and every daemon hears of the end
// (the store's ``SessionEndings``, fed by its listener) and closes the `WATCH HUNT`s of the
// connections whose session ended, at once, whatever they send next.

/// The connections of one daemon that are logged in, held weakly: those to check when sessions
/// end. A closed connection is forgotten (``remove(_:)``); entries whose connection is gone are
/// swept whenever the table has doubled since the last sweep.
final class SignedInSessions: Sendable {
    private struct Entry {
        weak var session: Session?
    }

    private struct Table {
        var entries: [ObjectIdentifier: Entry] = [:]
        var sweepAt = 1024
    }

    private let table = Mutex(Table())

    /// Remembers a connection that logged in.
    func add(_ session: Session) {
        table.withLock { table in
            table.entries[ObjectIdentifier(session)] = Entry(session: session)
            guard table.entries.count >= table.sweepAt else { return }
            table.entries = table.entries.filter { $0.value.session?.isConnected == true }
            table.sweepAt = max(1024, table.entries.count * 2)
        }
    }

    /// Forgets a connection (it closed).
    func remove(_ session: Session) {
        _ = table.withLock { $0.entries.removeValue(forKey: ObjectIdentifier(session)) }
    }

    /// The logged-in connections `which` picks.
    func sessions(where which: (Session) -> Bool) -> [Session] {
        table.withLock { table in
            table.entries.values.compactMap { entry in
                guard let session = entry.session, session.isConnected, session.login != nil, which(session) else { return nil }
                return session
            }
        }
    }
}

extension Board {
    /// The `closed` reason of a watch whose session ended.
    static let sessionEndedReason = "session-ended"

    /// Logs `session` in (it is checked when sessions end).
    func signIn(_ session: Session, account: Account, tokenHash: [UInt8]) {
        session.logIn(user: account.user, userID: account.id, tokenHash: tokenHash)
        signedIn.add(session)
    }

    /// The session's login as the database has it now: nil with no login, or when its session
    /// has ended (the connection is then logged out and its hunt watches closed). For reads whose
    /// answer depends on who asks.
    func checkedViewer(of session: Session) async throws -> Account? {
        guard let login = session.login else { return nil }
        guard let account = try await liveAccount(sessionTokenHash: login.tokenHash) else {
            sessionEnded(session, tokenHash: login.tokenHash)
            return nil
        }
        session.logIn(user: account.user, userID: account.id, tokenHash: login.tokenHash)
        return account
    }

    /// ``checkedViewer(of:)``'s user id.
    func checkedViewerID(of session: Session) async throws -> Int? {
        try await checkedViewer(of: session)?.id
    }

    /// For a read that memory answers while the database is away (a kept leaderboard): the
    /// checked viewer, or, when the database cannot be reached, the login as this daemon knows it
    /// (its listener has ended every session it heard ended).
    func memoryBackedViewerID(of session: Session) async throws -> Int? {
        do {
            return try await checkedViewerID(of: session)
        } catch {
            if case StoreError.unavailable = error { return Self.viewerID(session) }
            throw error
        }
    }

    /// The session of `tokenHash` has ended: `session`, if still logged in with it, is logged
    /// out and its hunt watches closed (each with a last `closed` event).
    func sessionEnded(_ session: Session, tokenHash: [UInt8]) {
        guard session.logOut(ifTokenHash: tokenHash) else { return }
        for id in session.watches where HuntFeed.isHuntWatch(id) {
            feed.hunts.closeWatch(id: id, reason: Self.sessionEndedReason)
        }
    }

    /// Acts on sessions other connections ended (heard by this daemon's listener): the
    /// connections here that used them are logged out and their hunt watches closed.
    func endSessions(_ ended: [EndedSessions]) async {
        var tokens = Set<[UInt8]>()
        var users = Set<Int>()
        var any = false
        for end in ended {
            switch end {
            case .token(let hash): tokens.insert(hash)
            case .user(let id): users.insert(id)
            case .any: any = true
            }
        }
        let candidates = signedIn.sessions { session in
            guard let login = session.login else { return false }
            return any || tokens.contains(login.tokenHash) || users.contains(login.userID)
        }
        guard !candidates.isEmpty else { return }
        let held = Set(candidates.compactMap(\.tokenHash))
        let live: Set<[UInt8]>
        do {
            live = try await store.liveSessions(held)
        } catch {
            // Each of these connections checks its session on its next read of what needs a login.
            logger.debug("ended sessions not checked now", metadata: ["error": "\(error)"])
            return
        }
        for session in candidates {
            guard let hash = session.tokenHash, !live.contains(hash) else { continue }
            sessionEnded(session, tokenHash: hash)
        }
    }

    /// PHOTO: a check-in's photo (its player's, the host's and moderators'; the session checked
    /// first) or a live photo pin's image.
    public func photo(id: String, viewer session: Session) async throws(BoardError) -> Photo {
        guard Identifier.isCheckIn(id) else { return try await photo(pinID: id, viewer: session) }
        _ = try await guarded { try await checkedViewer(of: session) }
        return try await checkInPhoto(id: id, viewer: session)
    }
}
