/// Why content was reported.
public enum ReportReason: String, Sendable, CaseIterable {
    case spam, harassment, hate, sexual, violence, illegal, other
}

/// What a moderator decided.
public enum Resolution: String, Sendable, CaseIterable, Codable {
    /// Nothing wrong: the content is shown again and cannot be hidden by reports again.
    case dismiss
    /// Taken out of every feed for good.
    case remove
    /// Removed, and its author banned.
    case ban
}

/// Where a queue item stands.
public enum ItemStatus: String, Sendable, CaseIterable, Codable {
    case open, claimed, resolved
}

/// A ban's end: a time, or never.
public enum BanEnd: Sendable, Equatable {
    case until(Timestamp)
    case permanent

    /// `permanent`, or the RFC 3339 time.
    public var text: String {
        switch self {
        case .until(let time): return time.rfc3339
        case .permanent: return "permanent"
        }
    }
}

/// Moderation settings operators can configure.
public struct ModerationRules: Sendable {
    /// Distinct reporters that hide an item until a moderator decides; default 3.
    public var hideThreshold: Int
    /// How long a claim lasts; default 15 minutes.
    public var claimSeconds: Int
    /// A ban's length when RESOLVE … ban gives none; default 7 days.
    public var defaultBanSeconds: Int
    /// How old (in seconds) an account must have been when it filed a report for that report to
    /// count toward ``hideThreshold``; reports of younger (or now banned) accounts are queued but
    /// hide nothing. Default 24 hours: a sock-puppet farm has to plan a day ahead, while a real
    /// newcomer's reports still reach the moderators at once. 0 counts every account's.
    public var minimumReporterAgeSeconds: Int

    public init(
        hideThreshold: Int = 3, claimSeconds: Int = 15 * 60, defaultBanSeconds: Int = 7 * 24 * 3600, minimumReporterAgeSeconds: Int = 24 * 3600
    ) {
        self.hideThreshold = hideThreshold
        self.claimSeconds = claimSeconds
        self.defaultBanSeconds = defaultBanSeconds
        self.minimumReporterAgeSeconds = minimumReporterAgeSeconds
    }
}

/// The evidence: the reported content as it was at the first report.
public struct ContentSnapshot: Sendable, Equatable, Codable {
    public var author: String
    public var text: String
    /// For a reply, the pin it was under.
    public var pin: String?
    public var lat: Double
    public var lon: Double
    /// For a pin, text or photo.
    public var pinKind: PinKind?
    public var created: Timestamp
    public var expires: Timestamp?
    public var photo: PhotoInfo?
    /// Whether a copy of the photo is still kept (while the item is not resolved).
    public var photoKept: Bool

    public init(
        author: String, text: String, pin: String?, lat: Double, lon: Double, pinKind: PinKind?, created: Timestamp,
        expires: Timestamp?, photo: PhotoInfo?, photoKept: Bool
    ) {
        self.author = author
        self.text = text
        self.pin = pin
        self.lat = lat
        self.lon = lon
        self.pinKind = pinKind
        self.created = created
        self.expires = expires
        self.photo = photo
        self.photoKept = photoKept
    }
}

/// A reported pin or reply with all its reports, as the queue shows it.
public struct ModerationItem: Sendable, Equatable {
    public var item: String
    /// `pin` or `reply`.
    public var kind: String
    public var content: ContentSnapshot
    public var reports: Int
    public var reasons: [(reason: String, count: Int)]
    public var status: ItemStatus
    public var claimedBy: String?
    public var hidden: Bool
    public var firstReported: Timestamp
    public var lastReported: Timestamp
    public var resolution: Resolution?

    public init(
        item: String, kind: String, content: ContentSnapshot, reports: Int, reasons: [(reason: String, count: Int)],
        status: ItemStatus, claimedBy: String?, hidden: Bool, firstReported: Timestamp, lastReported: Timestamp,
        resolution: Resolution?
    ) {
        self.item = item
        self.kind = kind
        self.content = content
        self.reports = reports
        self.reasons = reasons
        self.status = status
        self.claimedBy = claimedBy
        self.hidden = hidden
        self.firstReported = firstReported
        self.lastReported = lastReported
        self.resolution = resolution
    }

    public static func == (lhs: ModerationItem, rhs: ModerationItem) -> Bool {
        lhs.item == rhs.item && lhs.kind == rhs.kind && lhs.content == rhs.content && lhs.reports == rhs.reports
            && lhs.reasons.map(\.reason) == rhs.reasons.map(\.reason) && lhs.reasons.map(\.count) == rhs.reasons.map(\.count)
            && lhs.status == rhs.status && lhs.claimedBy == rhs.claimedBy && lhs.hidden == rhs.hidden
            && lhs.firstReported == rhs.firstReported && lhs.lastReported == rhs.lastReported
            && lhs.resolution == rhs.resolution
    }
}

extension ModerationItem: Codable {
    private enum CodingKeys: String, CodingKey {
        case item, kind, content, reports, reasons, status, claimedBy, hidden, firstReported, lastReported, resolution
    }

    /// A reason with its count, as ``reasons`` is encoded.
    private struct ReasonCount: Codable {
        var reason: String
        var count: Int
    }

    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            item: try values.decode(String.self, forKey: .item), kind: try values.decode(String.self, forKey: .kind),
            content: try values.decode(ContentSnapshot.self, forKey: .content), reports: try values.decode(Int.self, forKey: .reports),
            reasons: try values.decode([ReasonCount].self, forKey: .reasons).map { ($0.reason, $0.count) },
            status: try values.decode(ItemStatus.self, forKey: .status), claimedBy: try values.decodeIfPresent(String.self, forKey: .claimedBy),
            hidden: try values.decode(Bool.self, forKey: .hidden), firstReported: try values.decode(Timestamp.self, forKey: .firstReported),
            lastReported: try values.decode(Timestamp.self, forKey: .lastReported),
            resolution: try values.decodeIfPresent(Resolution.self, forKey: .resolution))
    }

    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(item, forKey: .item)
        try values.encode(kind, forKey: .kind)
        try values.encode(content, forKey: .content)
        try values.encode(reports, forKey: .reports)
        try values.encode(reasons.map { ReasonCount(reason: $0.reason, count: $0.count) }, forKey: .reasons)
        try values.encode(status, forKey: .status)
        try values.encodeIfPresent(claimedBy, forKey: .claimedBy)
        try values.encode(hidden, forKey: .hidden)
        try values.encode(firstReported, forKey: .firstReported)
        try values.encode(lastReported, forKey: .lastReported)
        try values.encodeIfPresent(resolution, forKey: .resolution)
    }
}

/// One line of the moderation log.
public struct ModerationLogEntry: Sendable, Equatable {
    public var id: Int
    public var at: Timestamp
    public var moderator: String
    public var action: String
    public var item: String?
    public var user: String?
    public var note: String?

    public init(id: Int, at: Timestamp, moderator: String, action: String, item: String?, user: String?, note: String?) {
        self.id = id
        self.at = at
        self.moderator = moderator
        self.action = action
        self.item = item
        self.user = user
        self.note = note
    }
}

extension Identifier {
    /// A new report id, `q` and 24 characters.
    public static func newReport() -> String { make(prefix: "q") }
}

/// How long a ban lasts, as a moderator gives it.
public enum BanLength: Sendable, Equatable {
    case seconds(Int)
    case permanent
}

/// One report of an item, as a reviewing moderator sees it: who reported, how old their
/// account was then (a brigade of fresh accounts shows), why.
public struct ItemReport: Sendable, Equatable {
    public var reporter: String
    /// Seconds between the reporter's registration and the report.
    public var reporterAgeSeconds: Int
    public var reason: ReportReason
    public var note: String?
    public var at: Timestamp

    public init(reporter: String, reporterAgeSeconds: Int, reason: ReportReason, note: String?, at: Timestamp) {
        self.reporter = reporter
        self.reporterAgeSeconds = reporterAgeSeconds
        self.reason = reason
        self.note = note
        self.at = at
    }
}

/// A pin or reply an author wrote, in their history.
public struct AuthoredContent: Sendable, Equatable {
    public var id: String
    public var text: String
    public var created: Timestamp
    public var hidden: Bool
    /// For a pin, its kind and place; for a reply, the pin it is under.
    public var pinKind: PinKind?
    public var lat: Double?
    public var lon: Double?
    public var pin: String?

    public init(
        id: String, text: String, created: Timestamp, hidden: Bool, pinKind: PinKind? = nil, lat: Double? = nil,
        lon: Double? = nil, pin: String? = nil
    ) {
        self.id = id
        self.text = text
        self.created = created
        self.hidden = hidden
        self.pinKind = pinKind
        self.lat = lat
        self.lon = lon
        self.pin = pin
    }
}

/// What a moderator weighs about the author of reported content: their account, recent pins and
/// replies, the other reported items of theirs and the bans they had.
public struct AuthorHistory: Sendable, Equatable {
    public var name: String
    public var role: Role
    public var joined: Timestamp
    public var ban: BanEnd?
    public var pins: [AuthoredContent]
    public var replies: [AuthoredContent]
    public var reportedItems: [ModerationItem]
    /// Log entries naming the author: bans, unbans, deletes of their pins.
    public var actions: [ModerationLogEntry]

    public init(
        name: String, role: Role, joined: Timestamp, ban: BanEnd?, pins: [AuthoredContent], replies: [AuthoredContent],
        reportedItems: [ModerationItem], actions: [ModerationLogEntry]
    ) {
        self.name = name
        self.role = role
        self.joined = joined
        self.ban = ban
        self.pins = pins
        self.replies = replies
        self.reportedItems = reportedItems
        self.actions = actions
    }
}
