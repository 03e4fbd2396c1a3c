import ScavengerCore
import ScavengerStore

extension Board {
    /// The rate of `action` for a user of `role` (moderators and admins get more), or nil.
    func rate(_ action: RateLimitedAction, for role: Role) -> RateLimit? {
        rules.writeRates.limit(action, for: role)
    }

    /// Runs a write that draws from a user's bucket, turning an empty bucket into `RATE_LIMITED`
    /// with the wait and the rate.
    func charging<T>(_ action: RateLimitedAction, _ limit: RateLimit?, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch StoreError.rateLimited(let seconds) {
            let rate = limit.map { " (at most \($0.count) per \($0.seconds) s)" } ?? ""
            throw BoardError.rateLimited(
                retryAfter: seconds, "too many \(action.command) requests\(rate); wait \(seconds) s")
        }
    }
}
