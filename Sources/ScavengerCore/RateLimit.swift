/// A rate as a token bucket: at most ``count`` actions at once, refilled at ``count`` per
/// ``seconds``. Written `COUNT/SECONDS` (e.g. `30/600`: thirty per ten minutes, in a burst or
/// spread out).
public struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    /// The bucket's size: how many actions may come in a burst.
    public var count: Int
    /// How long the bucket takes to refill from empty.
    public var seconds: Int

    public init(count: Int, seconds: Int) {
        precondition(count >= 1 && seconds >= 1, "a rate needs a count and seconds of at least 1")
        self.count = count
        self.seconds = seconds
    }

    /// Parses `COUNT/SECONDS` with both at least 1 (and at most a billion); nil otherwise.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = Self.positive(parts[0]), let seconds = Self.positive(parts[1]) else { return nil }
        self.init(count: count, seconds: seconds)
    }

    private static func positive(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) }),
              let value = Int(text), (1 ... 1_000_000_000).contains(value)
        else { return nil }
        return value
    }

    /// Tokens added per second.
    public var perSecond: Double { Double(count) / Double(seconds) }

    /// The same refill time with `factor` times the tokens (for moderators and admins).
    public func scaled(by factor: Int) -> RateLimit {
        let (product, overflow) = count.multipliedReportingOverflow(by: max(1, factor))
        return RateLimit(count: overflow ? Int.max / 2 : product, seconds: seconds)
    }

    public var description: String { "\(count)/\(seconds)" }
}

/// The writes that are rate-limited per user; the raw value names the bucket.
public enum RateLimitedAction: String, Sendable, CaseIterable {
    case post, photo, reply, report
    /// `JOIN` and `LEAVE`, one bucket for both.
    case join

    /// The command as clients know it.
    public var command: String {
        switch self {
        case .post: "POST"
        case .photo: "POSTPHOTO"
        case .reply: "REPLY"
        case .report: "REPORT"
        case .join: "JOIN and LEAVE"
        }
    }
}

/// Each user's write rates; nil leaves an action unlimited.
public struct WriteRates: Sendable, Equatable {
    public var post: RateLimit?
    public var photo: RateLimit?
    public var reply: RateLimit?
    public var report: RateLimit?
    /// `JOIN` and `LEAVE` together.
    public var join: RateLimit?
    /// Moderators and admins get this many times the tokens.
    public var staffFactor: Int

    public init(
        post: RateLimit? = RateLimit(count: 30, seconds: 600), photo: RateLimit? = RateLimit(count: 10, seconds: 600),
        reply: RateLimit? = RateLimit(count: 60, seconds: 600), report: RateLimit? = RateLimit(count: 20, seconds: 3600),
        join: RateLimit? = RateLimit(count: 60, seconds: 600), staffFactor: Int = 10
    ) {
        self.join = join
        self.post = post
        self.photo = photo
        self.reply = reply
        self.report = report
        self.staffFactor = staffFactor
    }

    /// No limits at all.
    public static let unlimited = WriteRates(post: nil, photo: nil, reply: nil, report: nil, join: nil)

    /// The limit of `action` for a user of `role`, or nil when unlimited.
    public func limit(_ action: RateLimitedAction, for role: Role) -> RateLimit? {
        let base: RateLimit? = switch action {
        case .post: post
        case .photo: photo
        case .reply: reply
        case .report: report
        case .join: join
        }
        return role.canModerate ? base?.scaled(by: staffFactor) : base
    }
}
