import ScavengerCore
import ScavengerFeed

extension Board {
    /// MAP: the pins everyone may see in a box, counted per Web Mercator cell at a zoom (the
    /// fullest `limit` cells, each with its mean position and, when alone, its pin), from
    /// memory. `BAD_ARGUMENT` for a request ``MapRequest/problem`` refuses, `UNAVAILABLE` until
    /// the feed is loaded.
    public func map(_ request: MapRequest) throws(BoardError) -> MapAnswer<Pin> {
        if let problem = request.problem { throw BoardError(.badArgument, problem) }
        try requireLoadedFeed()
        return feed.map(request)
    }

    /// `WATCH MAP`: a watch of a box at a zoom whose events carry the cells that changed, at
    /// most one a second. Counts against the per-connection limit of watches; `BAD_ARGUMENT`
    /// for a request ``MapRequest/problem`` refuses.
    public func startMapWatch(_ request: MapRequest, session: Session) throws(BoardError) -> StartedWatch {
        if let problem = request.problem { throw BoardError(.badArgument, problem) }
        try requireLoadedFeed()
        try checkRoomForWatch(session)
        let started = feed.startMapWatch(request, sink: session.eventSink ?? DiscardingWatchSink.shared)
        session.insertWatch(started.id)
        if !session.isConnected { endWatch(started.id, session: session) }
        return started
    }
}
