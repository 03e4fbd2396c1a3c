import ScavengerCore
import ScavengerStore

extension Board {
    /// BADGES: `username`'s badges (the caller's when nil; a login is needed then), oldest
    /// first; `NOT_FOUND` for no such user. Anyone may see anyone's, but a caller other than the
    /// holder sees a badge earned in a hunt only when they may read that hunt (moderators see
    /// all; ``BadgeRules/isListed(_:callerHolds:callerModerates:)``). The session is checked in
    /// the database first: one that has ended is no login.
    public func badges(username: String?, viewer session: Session) async throws(BoardError) -> [Badge] {
        if let username { try RequestChecks.username(username) }
        return try await guarded {
            let viewer = try await checkedViewer(of: session)
            if username == nil, viewer?.user.isGuest == true {
                throw BoardError(.notFound, "a guest has no badges; REGISTER to keep your points")
            }
            guard let name = username ?? viewer?.user.name else {
                throw BoardError(.unauthorized, "BADGES without a username needs a login")
            }
            guard let held = try await store.badges(username: name, viewerID: viewer?.id) else {
                throw BoardError(.notFound, "no user named \(name)")
            }
            let holds = held.userID == viewer?.id
            let moderates = viewer.map { $0.user.role.canModerate && $0.ban == nil } ?? false
            return held.badges.filter { BadgeRules.isListed($0.1, callerHolds: holds, callerModerates: moderates) }.map(\.0)
        }
    }
}
