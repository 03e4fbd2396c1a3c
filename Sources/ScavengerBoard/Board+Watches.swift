import ScavengerCore
import ScavengerFeed

// WATCH and UNWATCH: live events for a circle, from the feed's hub.

extension Board {
    /// Starts a watch over `area` for the session's connection; returns its id. Beyond the
    /// per-connection limit, `BAD_ARGUMENT`; `UNAVAILABLE` until the feed is loaded.
    public func watch(_ area: WatchArea, session: Session) throws(BoardError) -> String {
        try checks.circle(lat: area.lat, lon: area.lon, radius: area.radius)
        try requireLoadedFeed()
        let limit = rules.feed.maximumWatchesPerConnection
        let sink = session.eventSink ?? DiscardingWatchSink.shared
        guard let id = session.addWatch(limit: limit, { feed.watches.add(area, sink: sink) }) else {
            throw BoardError(.badArgument, "at most \(limit) watches per connection; UNWATCH one first")
        }
        return id
    }

    /// Ends one of the session's watches; `NOT_FOUND` when it holds none with that id.
    public func unwatch(_ id: String, session: Session) throws(BoardError) {
        guard session.removeWatch(id) else {
            throw BoardError(.notFound, "no watch with that id on this connection")
        }
        feed.watches.remove(id: id)
    }

    /// Ends a watch whose events the connection could not take (overflow); nothing if already ended.
    public func endWatch(_ id: String, session: Session) {
        if session.removeWatch(id) { feed.watches.remove(id: id) }
    }

    /// Ends every watch of a connection that closed.
    public func endWatches(session: Session) {
        for id in session.removeAllWatches() { feed.watches.remove(id: id) }
    }
}

/// A sink for a session that cannot receive events.
final class DiscardingWatchSink: WatchSink {
    static let shared = DiscardingWatchSink()
    func deliver(_ events: [WatchEvent]) {}
}
