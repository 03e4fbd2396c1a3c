import ScavengerCore
import ScavengerStore

extension Board {
    /// BADGES: `username`'s badges (the caller's when nil; a login is needed then), oldest
    /// first. Anyone may see anyone's, as with PROFILE; `NOT_FOUND` for no such user.
    public func badges(username: String?, viewer session: Session) async throws(BoardError) -> [Badge] {
        let name = try profileName(username, session, command: "BADGES")
        return try await guarded {
            guard let badges = try await store.badges(username: name) else {
                throw BoardError(.notFound, "no user named \(name)")
            }
            return badges
        }
    }
}
