import ScavengerCore
import ScavengerStore
import Sodium

/// `scavengerd user password NAME`: an operator sets a user's password, outside any connection
/// (a user without mail who forgot theirs). The rules are REGISTER's; as with `RESET`, every
/// session of the user ends, on every daemon (their connections are told through the database).
public enum OperatorPassword {
    /// Checks `password` against REGISTER's rules, hashes it with `hasher` and has `store` apply
    /// it; `notFound` when there is no user of that name.
    public static func set(
        username: String, password: String, store: Database, hasher: PasswordHasher
    ) async throws(BoardError) {
        try RequestChecks().newPassword(password)
        let hash: String
        do {
            hash = try await hasher.hash(password)
        } catch {
            throw BoardError(.internalError, "the password could not be hashed: \(error)")
        }
        do {
            guard let userID = try await store.setPassword(username: username, passwordHash: hash) else {
                throw BoardError(.notFound, "no user named \(username)")
            }
            // Running daemons end the user's sessions on their connections (see Board+Sessions).
            try? await store.announce(.user(userID))
        } catch let error as BoardError {
            throw error
        } catch {
            throw BoardError(.unavailable, "the database could not be written: \(error)")
        }
    }
}
