internal import CSodium

/// Cost parameters for argon2id password hashing (`crypto_pwhash_str`).
///
/// Values can only be built within libsodium's limits, so a `PasswordHashing` is always usable.
public struct PasswordHashing: Sendable, Hashable {
    /// Number of passes over memory (argon2id `t`).
    public let opsLimit: Int
    /// Memory used while hashing, in bytes.
    public let memLimit: Int

    /// Creates parameters, throwing ``PasswordHashingError/invalidParameters`` when either limit
    /// is outside ``opsLimitRange`` / ``memLimitRange``.
    public init(opsLimit: Int, memLimit: Int) throws(PasswordHashingError) {
        guard Self.opsLimitRange.contains(opsLimit), Self.memLimitRange.contains(memLimit) else {
            throw .invalidParameters
        }
        self.init(unchecked: opsLimit, memLimit)
    }

    private init(unchecked opsLimit: Int, _ memLimit: Int) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// The operations limits libsodium accepts.
    public static let opsLimitRange: ClosedRange<Int> = {
        SodiumRuntime.ensureInitialized()
        return Int(clamping: crypto_pwhash_opslimit_min())...Int(clamping: crypto_pwhash_opslimit_max())
    }()

    /// The memory limits (bytes) libsodium accepts.
    public static let memLimitRange: ClosedRange<Int> = {
        SodiumRuntime.ensureInitialized()
        return Int(clamping: crypto_pwhash_memlimit_min())...Int(clamping: crypto_pwhash_memlimit_max())
    }()

    /// libsodium's interactive preset (`OPSLIMIT_INTERACTIVE` / `MEMLIMIT_INTERACTIVE`): online logins.
    public static let interactive: PasswordHashing = {
        SodiumRuntime.ensureInitialized()
        return PasswordHashing(
            unchecked: Int(clamping: crypto_pwhash_opslimit_interactive()),
            Int(clamping: crypto_pwhash_memlimit_interactive())
        )
    }()

    /// libsodium's moderate preset (`OPSLIMIT_MODERATE` / `MEMLIMIT_MODERATE`): slower, stronger.
    public static let moderate: PasswordHashing = {
        SodiumRuntime.ensureInitialized()
        return PasswordHashing(
            unchecked: Int(clamping: crypto_pwhash_opslimit_moderate()),
            Int(clamping: crypto_pwhash_memlimit_moderate())
        )
    }()

    /// For a hunt stop's claim code: argon2id with 2 passes over 1 MiB, about a millisecond. A code
    /// is a short clue printed on site, checked on every code check-in and limited by the wrong-code
    /// lockout, not a password: the salted hash keeps it out of a copy of the database in clear
    /// and out of precomputed tables, at a cost a crowd checking in at once can bear.
    public static let claimCodes: PasswordHashing = {
        SodiumRuntime.ensureInitialized()
        let minimumOps = Int(clamping: crypto_pwhash_opslimit_min())
        let minimumMemory = Int(clamping: crypto_pwhash_memlimit_min())
        return PasswordHashing(unchecked: max(minimumOps, 2), max(minimumMemory, 1 << 20))
    }()

    /// The cheapest parameters libsodium allows. Insecure: for fast tests only.
    public static let minimum: PasswordHashing = {
        SodiumRuntime.ensureInitialized()
        return PasswordHashing(
            unchecked: Int(clamping: crypto_pwhash_opslimit_min()),
            Int(clamping: crypto_pwhash_memlimit_min())
        )
    }()
}

/// Errors from password hashing.
public enum PasswordHashingError: Error, Sendable, Hashable {
    /// An opsLimit or memLimit outside libsodium's accepted range.
    case invalidParameters
    /// The password exceeds libsodium's maximum length (`crypto_pwhash_passwd_max`).
    case passwordTooLong
    /// `crypto_pwhash_str` failed, in practice because the memory could not be allocated.
    case hashingFailed
    /// The ``PasswordHasher`` has been shut down.
    case shutDown
    /// The calling task was cancelled before the work started.
    case cancelled
}
