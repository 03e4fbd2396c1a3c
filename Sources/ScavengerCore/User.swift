/// What a user may do.
public enum Role: String, Sendable, CaseIterable, Codable {
    case user
    case moderator
    case admin
    /// A guest: joined one hunt with its code and a name, without an account (protocol 1.5).
    /// Plays that hunt only; never in the rankings, no profile, no badges.
    case guest

    /// Moderators and admins work the report queue.
    public var canModerate: Bool { self == .moderator || self == .admin }
}

/// A registered account, or a guest, as clients see it.
public struct User: Sendable, Equatable {
    public var name: String
    public var role: Role

    public init(name: String, role: Role) {
        self.name = name
        self.role = role
    }
}

extension User {
    /// Whether this is a guest rather than an account.
    public var isGuest: Bool { role == .guest }
}
