/// What a user may do.
public enum Role: String, Sendable, CaseIterable, Codable {
    case user
    case moderator
    case admin

    /// Moderators and admins work the report queue.
    public var canModerate: Bool { self != .user }
}

/// A registered account as clients see it.
public struct User: Sendable, Equatable {
    public var name: String
    public var role: Role

    public init(name: String, role: Role) {
        self.name = name
        self.role = role
    }
}
