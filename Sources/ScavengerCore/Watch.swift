// The live feed's vocabulary: what a watch covers, what it reports, where reports go.
// (The hub that matches pins to watches is ScavengerFeed's WatchHub.)

/// A circle a client watches, with an optional kind.
public struct WatchArea: Sendable, Equatable {
    public var lat: Double
    public var lon: Double
    public var radius: Double
    public var kind: PinKind?

    public init(lat: Double, lon: Double, radius: Double, kind: PinKind? = nil) {
        self.lat = lat
        self.lon = lon
        self.radius = radius
        self.kind = kind
    }
}

/// What a watch reports.
public enum WatchEvent: Sendable, Equatable {
    /// A pin became visible inside the watch's circle, at `distance` metres from its centre;
    /// `seq` is the change log's entry that made it so (for a snapshot, the watch's start).
    case pin(watch: String, pin: Pin, distance: Double, seq: Int64)
    /// A pin that was visible inside the circle is gone (deleted, removed, hidden or expired);
    /// `seq` is the log's entry that removed or hid it, or for an expiry the feed's place then.
    case gone(watch: String, id: String, seq: Int64)
    /// A snapshot (`WATCH … SNAPSHOT`) is complete: live events follow, with larger seqs.
    case ready(watch: String, seq: Int64)
    /// Events for the watch were lost (the feed reloaded from scratch): it ends, and the client
    /// re-reads with NEARBY and watches again, as after its own connection's overflow.
    case overflow(watch: String)
    /// A watched hunt started, was extended or ended (`WATCH HUNT`); never with its join code.
    case hunt(watch: String, hunt: Hunt)
    /// The host of a watched hunt sent a hint.
    case hint(watch: String, text: String, at: Timestamp)
    /// A check-in at a watched hunt was accepted.
    case found(watch: String, player: String, stop: String, points: Int)
    /// A leaderboard entry of a watched hunt changed its points or its rank.
    case score(watch: String, entry: LeaderboardEntry)
    /// A message in a watched hunt's chat.
    case reply(watch: String, reply: PinReply)
    /// A player earned a badge in a watched hunt.
    case badge(watch: String, player: String, badge: Badge)
    /// A check-in at a watched hunt now waits for a review (`pending`, `flagged`): told to the
    /// host's watches only.
    case review(watch: String, checkIn: String, status: String)
    /// A hunt watch ended by the game, with nothing after it: its player left the hunt
    /// (`left`), or moderators removed the hunt (`removed`).
    case closed(watch: String, reason: String)
    /// The cells of a watched map box whose counts changed (`WATCH MAP`): each as MAP shows it,
    /// a cell that emptied with a count of 0.
    case cells(watch: String, cells: [MapCell<Pin>])

    /// The watch the event belongs to.
    public var watch: String {
        switch self {
        case .pin(let watch, _, _, _), .gone(let watch, _, _), .ready(let watch, _), .overflow(let watch), .hunt(let watch, _), .hint(let watch, _, _),
             .found(let watch, _, _, _), .score(let watch, _), .reply(let watch, _), .closed(let watch, _),
             .badge(let watch, _, _), .review(let watch, _, _), .cells(let watch, _):
            return watch
        }
    }
}

/// Where a watch's events go: one per connection. Called with each batch of events in the
/// order they happened, from any thread: it must hand them on (to an event loop) without
/// blocking. The area watches' hub calls it while locked, so it must not call back into the hub;
/// the hunts' feed calls it with none of its locks held.
public protocol WatchSink: AnyObject, Sendable {
    func deliver(_ events: [WatchEvent])
}

/// An area watch just started: its id, the change log's place it began at (the reply's `seq`),
/// whether a `SINCE` replay was possible, and how to let its events go (held until then, so
/// that the reply naming the watch goes out first; call once the reply is out).
public struct StartedWatch: Sendable {
    public var id: String
    public var seq: Int64
    public var resumed: Bool
    public var release: @Sendable () -> Void

    public init(id: String, seq: Int64, resumed: Bool, release: @escaping @Sendable () -> Void) {
        self.id = id
        self.seq = seq
        self.resumed = resumed
        self.release = release
    }
}
