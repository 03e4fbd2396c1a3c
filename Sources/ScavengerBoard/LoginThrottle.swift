import ScavengerCore
import Synchronization

/// Limits on password guessing, per client address and per account.
public struct LoginThrottleRules: Sendable, Equatable {
    /// Failed logins from one address before back-off starts; default 20 (several people may
    /// share an address behind a NAT).
    public var addressFreeFailures: Int
    /// Failed logins for one account before back-off starts; default 5.
    public var accountFreeFailures: Int
    /// The longest wait back-off grows to, in seconds; default 15 minutes.
    public var maximumBackoffSeconds: Int
    /// How long failures are remembered after the last one; default 1 hour.
    public var forgetAfterSeconds: Int
    /// Addresses and accounts tracked at most, each; the oldest are forgotten first.
    public var maximumTracked: Int

    public init(
        addressFreeFailures: Int = 20, accountFreeFailures: Int = 5, maximumBackoffSeconds: Int = 15 * 60,
        forgetAfterSeconds: Int = 3600, maximumTracked: Int = 100_000
    ) {
        self.addressFreeFailures = addressFreeFailures
        self.accountFreeFailures = accountFreeFailures
        self.maximumBackoffSeconds = maximumBackoffSeconds
        self.forgetAfterSeconds = forgetAfterSeconds
        self.maximumTracked = maximumTracked
    }
}

/// Failed LOGINs, counted per client address and per account, with back-off that doubles from
/// 1 second up to a maximum once the free failures are used up. An attempt holds a place while
/// its password is checked, so guesses sent at once cannot outrun the count.
///
/// A locked account does not lock out its owner: an address with no failures on record may still
/// try it (and if that try fails, the address has a failure). So a guesser gets one try per
/// fresh address, and the real user, from an address that has not been failing, gets in.
///
/// In memory, per daemon: a failed login writes nothing to the database, so a guessing storm
/// cannot turn into a write storm. With several daemons, a guesser gets each daemon's allowance.
public final class LoginThrottle: Sendable {
    public let rules: LoginThrottleRules
    private let state: Mutex<State>

    struct State: ~Copyable {
        var addresses: TrackedFailures<String>
        var accounts: TrackedFailures<Int>
    }

    public init(rules: LoginThrottleRules = LoginThrottleRules()) {
        self.rules = rules
        state = Mutex(State(
            addresses: TrackedFailures(freeFailures: rules.addressFreeFailures, rules: rules),
            accounts: TrackedFailures(freeFailures: rules.accountFreeFailures, rules: rules)))
    }

    /// A login attempt holding its place until ``finish(_:succeeded:now:)``.
    public struct Attempt: Sendable {
        let address: String?
        let account: Int?
        /// The address had no failures on record and nothing in progress: its password check may
        /// go ahead of others'.
        public let addressWasClean: Bool
    }

    /// Whether `address` has no failed logins on record and none under way (no address: true).
    public func isClean(_ address: String?) -> Bool {
        guard let address else { return true }
        return state.withLock { $0.addresses.isClean(address) }
    }

    /// Refuses at once when the address is held back, before anything is looked up.
    public func checkAddress(_ address: String?, now: ContinuousClock.Instant = .now) throws(BoardError) {
        guard let address else { return }
        let wait = state.withLock { $0.addresses.wait(for: address, now: now) }
        if let wait { throw Self.refusal(wait) }
    }

    /// Starts an attempt from `address` at `account` (nil when no account has that name), or
    /// refuses it with the seconds to wait.
    public func begin(address: String?, account: Int?, now: ContinuousClock.Instant = .now) throws(BoardError) -> Attempt {
        let outcome = state.withLock { state -> Result<Attempt, BoardError> in
            let clean = address.map { state.addresses.isClean($0) } ?? true
            if let address, let wait = state.addresses.wait(for: address, now: now) {
                return .failure(Self.refusal(wait))
            }
            // A locked account still lets a clean address try.
            if !clean, let account, let wait = state.accounts.wait(for: account, now: now) {
                return .failure(Self.refusal(wait))
            }
            if let address { state.addresses.start(address, now: now) }
            if let account { state.accounts.start(account, now: now) }
            return .success(Attempt(address: address, account: account, addressWasClean: clean))
        }
        return try outcome.get()
    }

    /// Ends an attempt: `succeeded` true or false records the outcome; nil (the check never ran:
    /// the queue was full or the client left) records nothing. A success clears the account's
    /// failures, never the address's (one good account must not reset an address's guesses).
    public func finish(_ attempt: Attempt, succeeded: Bool?, now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            if let address = attempt.address {
                state.addresses.finish(address, failed: succeeded == false, now: now)
            }
            if let account = attempt.account {
                state.accounts.finish(account, failed: succeeded == false, now: now)
                if succeeded == true { state.accounts.clear(account) }
            }
        }
    }

    /// How many addresses and accounts have failures on record (for tests and metrics).
    public var tracked: (addresses: Int, accounts: Int) {
        state.withLock { ($0.addresses.count, $0.accounts.count) }
    }

    static func refusal(_ wait: Int) -> BoardError {
        .rateLimited(retryAfter: wait, "too many failed logins; wait \(wait) s before trying again")
    }
}

/// Failures per key with back-off, bounded in size.
struct TrackedFailures<Key: Hashable & Sendable>: ~Copyable {
    struct Record {
        var failures = 0
        /// Checks under way.
        var inProgress = 0
        var lastFailure: ContinuousClock.Instant
        var lockedUntil: ContinuousClock.Instant?
    }

    let freeFailures: Int
    let maximumBackoff: Duration
    let forgetAfter: Duration
    let maximumTracked: Int
    private var records: [Key: Record] = [:]

    init(freeFailures: Int, rules: LoginThrottleRules) {
        self.freeFailures = freeFailures
        maximumBackoff = .seconds(rules.maximumBackoffSeconds)
        forgetAfter = .seconds(rules.forgetAfterSeconds)
        maximumTracked = rules.maximumTracked
    }

    var count: Int { records.count }

    /// No failures remembered and no check under way.
    func isClean(_ key: Key) -> Bool {
        guard let record = records[key] else { return true }
        return record.failures == 0 && record.inProgress == 0
    }

    /// Seconds to wait before `key` may try again, or nil when it may now. Once the free failures
    /// are spent, one check at a time, and only after the back-off.
    func wait(for key: Key, now: ContinuousClock.Instant) -> Int? {
        guard let record = records[key], now - record.lastFailure < forgetAfter || record.inProgress > 0 else { return nil }
        guard record.failures + record.inProgress >= freeFailures else { return nil }
        if let lockedUntil = record.lockedUntil, now < lockedUntil {
            return Self.wholeSeconds(lockedUntil - now)
        }
        return record.inProgress > 0 ? 1 : nil
    }

    mutating func start(_ key: Key, now: ContinuousClock.Instant) {
        if records[key] == nil { makeRoom(now: now) }
        records[key, default: Record(lastFailure: now)].inProgress += 1
    }

    mutating func finish(_ key: Key, failed: Bool, now: ContinuousClock.Instant) {
        guard var record = records[key] else { return }
        record.inProgress = max(0, record.inProgress - 1)
        if failed {
            if now - record.lastFailure >= forgetAfter { record.failures = 0 }
            record.failures += 1
            record.lastFailure = now
            let over = record.failures - freeFailures
            if over >= 0 {
                // 1 s, 2 s, 4 s, … up to the maximum.
                let backoff = over >= 30 ? maximumBackoff : min(maximumBackoff, .seconds(1 << over))
                record.lockedUntil = now + backoff
            }
        }
        if record.failures == 0 && record.inProgress == 0 {
            records[key] = nil
        } else {
            records[key] = record
        }
    }

    mutating func clear(_ key: Key) {
        if records[key]?.inProgress ?? 0 == 0 { records[key] = nil } else { records[key]?.failures = 0 }
    }

    /// Before tracking a new key at the limit: forget what has expired, then the oldest tenth.
    private mutating func makeRoom(now: ContinuousClock.Instant) {
        guard records.count >= maximumTracked else { return }
        let forgetAfter = self.forgetAfter
        records = records.filter { $0.value.inProgress > 0 || now - $0.value.lastFailure < forgetAfter }
        guard records.count >= maximumTracked else { return }
        let oldest = records.filter { $0.value.inProgress == 0 }.sorted { $0.value.lastFailure < $1.value.lastFailure }
        for (key, _) in oldest.prefix(max(1, maximumTracked / 10)) { records[key] = nil }
    }

    static func wholeSeconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }
}
