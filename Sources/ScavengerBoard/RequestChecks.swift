import ScavengerCore

/// The rules a request's values must meet, written once: the board applies them in every use
/// case, and a front end may call them while it parses, to refuse a bad value before anything
/// else happens (the line protocol does, so that errors come in argument order). Every failure
/// is a `badArgument` ``BoardError`` whose message says what to fix.
public struct RequestChecks: Sendable {
    /// The configured pin rules (TTL bounds, photo size).
    public let pins: PinRules
    /// The configured feed rules (radius limit).
    public let feed: FeedRules

    public init(pins: PinRules = PinRules(), feed: FeedRules = FeedRules()) {
        self.pins = pins
        self.feed = feed
    }

    /// The longest ban a moderator can give in seconds: a hundred years (`permanent` is longer).
    public static let maximumBanSeconds = 100 * 365 * 24 * 3600

    /// A latitude in [-90, 90].
    public func latitude(_ value: Double) throws(BoardError) {
        guard (-90 ... 90).contains(value) else { throw BoardError(.badArgument, "latitude must be within [-90, 90]") }
    }

    /// A longitude in [-180, 180].
    public func longitude(_ value: Double) throws(BoardError) {
        guard (-180 ... 180).contains(value) else { throw BoardError(.badArgument, "longitude must be within [-180, 180]") }
    }

    /// A radius above 0 and at most the feed's configured maximum (NEARBY, WATCH).
    public func radius(_ value: Double) throws(BoardError) {
        let maximum = feed.maximumRadiusMeters
        guard value > 0, value <= maximum else {
            throw BoardError(.badArgument, "radius_m must be greater than 0 and at most \(Presence.plain(maximum))")
        }
    }

    /// A pin's lifetime: 1 second to the configured maximum.
    public func ttl(_ seconds: Int) throws(BoardError) {
        try Self.whole(seconds, "TTL", in: 1 ... pins.maximumTTLSeconds)
    }

    /// A pin's text, a caption (`allowEmpty`), a reply or a note: the contract's text rules.
    public func text(_ text: String, _ name: String = "text", allowEmpty: Bool = false) throws(BoardError) {
        try Self.validated { () throws(ValidationError) in try Validation.text(text, name: name, allowEmpty: allowEmpty) }
    }

    /// A moderator's or reporter's note.
    public func note(_ note: String?) throws(BoardError) {
        if let note { try text(note, "NOTE") }
    }

    /// A ban's length in seconds: 1 second to ``maximumBanSeconds``.
    public func banSeconds(_ seconds: Int) throws(BoardError) {
        try Self.whole(seconds, "ban duration", in: 1 ... Self.maximumBanSeconds)
    }

    /// A circle to search or watch: a point and a radius.
    public func circle(lat: Double, lon: Double, radius: Double) throws(BoardError) {
        try latitude(lat)
        try longitude(lon)
        try self.radius(radius)
    }

    /// A pin to post: its place, its text (a photo's caption may be empty) and its lifetime.
    public func pin(_ draft: PinDraft) throws(BoardError) {
        try latitude(draft.lat)
        try longitude(draft.lon)
        try text(draft.text, draft.photo == nil ? "text" : "caption", allowEmpty: draft.photo != nil)
        try ttl(draft.ttlSeconds)
    }

    /// A ban's length, when it is one of seconds.
    public func ban(_ length: BanLength?) throws(BoardError) {
        if case .seconds(let seconds) = length { try banSeconds(seconds) }
    }

    /// A new account's name, email and password.
    public func registration(name: String, email: String, password: String) throws(BoardError) {
        try Self.validated { () throws(ValidationError) in
            try Validation.username(name)
            try Validation.email(email)
            try Validation.password(password)
        }
    }

    /// A new password for `RESET`: REGISTER's password rules.
    public func newPassword(_ password: String) throws(BoardError) {
        try Self.validated { () throws(ValidationError) in try Validation.password(password) }
    }

    /// An existing account's name, as given to look it up (the username rules).
    public static func username(_ name: String) throws(BoardError) {
        try validated { () throws(ValidationError) in try Validation.username(name) }
    }

    /// A whole number within `range`.
    public static func whole(_ value: Int, _ name: String, in range: ClosedRange<Int>) throws(BoardError) {
        guard range.contains(value) else {
            throw BoardError(.badArgument, "\(name) must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
        }
    }

    private static func validated(_ check: () throws(ValidationError) -> Void) throws(BoardError) {
        do {
            try check()
        } catch {
            throw BoardError(.badArgument, error.message)
        }
    }
}

extension Board {
    /// The request rules as this board's operators configured them.
    public var checks: RequestChecks { RequestChecks(pins: rules.pins, feed: rules.feed) }
}
