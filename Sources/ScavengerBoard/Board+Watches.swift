import ScavengerCore
import ScavengerFeed

// WATCH and UNWATCH: live events for a circle, from the feed's hub.

extension Board {
    /// Starts a watch over `area` at the feed's place (its reply's `seq`), with the pins inside
    /// first when `snapshot` (then `ready`). Beyond the per-connection limit, `BAD_ARGUMENT`;
    /// `UNAVAILABLE` until the feed is loaded. Its events wait until ``StartedWatch/release()``,
    /// which the front end calls once the reply has gone out.
    public func startWatch(_ area: WatchArea, snapshot: Bool, session: Session) throws(BoardError) -> StartedWatch {
        try checks.circle(lat: area.lat, lon: area.lon, radius: area.radius)
        try requireLoadedFeed()
        try checkRoomForWatch(session)
        let started = feed.startWatch(area, sink: session.eventSink ?? DiscardingWatchSink.shared, snapshot: snapshot)
        hold(started, session: session)
        return started
    }

    /// Whether a `WATCH … SNAPSHOT` must first wait for ``startSnapshotWatch(_:session:)``: this
    /// daemon has acknowledged pins its feed has not yet announced.
    public var snapshotWaitsForOwnPins: Bool { feed.hasUnannouncedOwnPins }

    /// `WATCH … SNAPSHOT` once every pin this daemon acknowledged before it is announced (the
    /// feed caught up with the log), so that the snapshot holds them all, as a daemon's own
    /// writes are in its next reply; then as ``startWatch(_:snapshot:session:)``.
    public func startSnapshotWatch(_ area: WatchArea, session: Session) async throws(BoardError) -> StartedWatch {
        try checks.circle(lat: area.lat, lon: area.lon, radius: area.radius)
        try requireLoadedFeed()
        try await guarded { try await feed.catchUp() }
        return try startWatch(area, snapshot: true, session: session)
    }

    /// `WATCH … SINCE seq`: a watch that first replays the changes inside `area` after `since`
    /// (``Feed/resumeWatch(_:sink:since:)``); `resumed` is false when the log no longer reaches
    /// back there. A `since` past the log's end is `BAD_ARGUMENT`.
    public func resumeWatch(_ area: WatchArea, since: Int64, session: Session) async throws(BoardError) -> StartedWatch {
        try checks.circle(lat: area.lat, lon: area.lon, radius: area.radius)
        guard since >= 0 else { throw BoardError(.badArgument, "SINCE must be a seq of 0 or more") }
        try requireLoadedFeed()
        try checkRoomForWatch(session)
        let sink = session.eventSink ?? DiscardingWatchSink.shared
        let started = try await guarded { try await feed.resumeWatch(area, sink: sink, since: since) }
        guard let started else {
            throw BoardError(.badArgument, "SINCE \(since) is past the end of the change log")
        }
        hold(started, session: session)
        return started
    }

    /// The session holds the watch from now on; one whose connection closed meanwhile (while the
    /// log was read) ends at once, as the close ended the others.
    private func hold(_ started: StartedWatch, session: Session) {
        session.insertWatch(started.id)
        if !session.isConnected { endWatch(started.id, session: session) }
    }

    func checkRoomForWatch(_ session: Session) throws(BoardError) {
        let limit = rules.feed.maximumWatchesPerConnection
        guard session.hasRoomForWatch(limit: limit) else {
            throw BoardError(.badArgument, "at most \(limit) watches per connection; UNWATCH one first")
        }
    }

    /// WATCH HUNT: live events of a hunt for its host and players (the hunt's state, hints,
    /// accepted check-ins, leaderboard entries that changed). Counts against the same
    /// per-connection limit as area watches.
    public func watchHunt(id huntID: String, session: Session) async throws(BoardError) -> String {
        guard session.login != nil else { throw BoardError(.unauthorized, "log in first (REGISTER, LOGIN or AUTH)") }
        return try await guarded {
            // The session as the database has it now: one that has ended is no login.
            guard let viewer = try await checkedViewerID(of: session) else {
                throw BoardError(.unauthorized, "the session has expired or was logged out; log in again")
            }
            guard Identifier.isHunt(huntID), let record = try await store.hunt(id: huntID) else { throw Self.noSuchHunt }
            var player: String?
            if record.hostID != viewer {
                guard let playing = try await store.player(huntID: huntID, userID: viewer) else {
                    guard record.isPublic, !record.removed else { throw Self.noSuchHunt }
                    throw BoardError(.forbidden, "only the hunt's host and players may watch it")
                }
                guard !record.removed else { throw Self.noSuchHunt }
                player = playing.player.name
            }
            try await feed.hunts.prepareWatch(of: huntID)
            try checkRoomForWatch(session)
            // Started outside the session's lock: a sink may take the session's lock while it
            // delivers (the hunts' feed calls it outside its own lock, the area watches' hub
            // under its), so no lock of the feed's is taken inside the session's.
            let id = feed.hunts.addWatch(record, player: player, sink: session.eventSink ?? DiscardingWatchSink.shared)
            session.insertWatch(id)
            if !session.isConnected { endWatch(id, session: session) }
            // The session ended meanwhile (and its watches were closed before this one was held).
            if session.tokenHash == nil { feed.hunts.closeWatch(id: id, reason: Self.sessionEndedReason) }
            return id
        }
    }

    /// Ends a watch of either kind by id.
    private func removeWatch(_ id: String) {
        if HuntFeed.isHuntWatch(id) {
            feed.hunts.removeWatch(id: id)
        } else if Feed.isMapWatch(id) {
            feed.removeMapWatch(id: id)
        } else {
            feed.watches.remove(id: id)
        }
    }

    /// Ends one of the session's watches; `NOT_FOUND` when it holds none with that id.
    public func unwatch(_ id: String, session: Session) throws(BoardError) {
        guard session.removeWatch(id) else {
            throw BoardError(.notFound, "no watch with that id on this connection")
        }
        removeWatch(id)
    }

    /// Ends a watch whose events the connection could not take (overflow); nothing if already ended.
    public func endWatch(_ id: String, session: Session) {
        if session.removeWatch(id) { removeWatch(id) }
    }

    /// Ends every watch of a connection that closed (which is no longer checked when sessions end).
    public func endWatches(session: Session) {
        signedIn.remove(session)
        for id in session.removeAllWatches() { removeWatch(id) }
    }
}

/// A sink for a session that cannot receive events.
final class DiscardingWatchSink: WatchSink {
    static let shared = DiscardingWatchSink()
    func deliver(_ events: [WatchEvent]) {}
}
