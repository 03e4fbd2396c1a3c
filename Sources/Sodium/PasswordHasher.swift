internal import CSodium
import NIOPosix
import Synchronization

/// Salted argon2id password hashing (libsodium `crypto_pwhash_str`) on a dedicated thread pool.
///
/// Hashing is deliberately CPU- and memory-heavy, so the async methods run it on an owned
/// `NIOThreadPool`, never on an event loop or Swift's cooperative pool. Call ``shutdown()``
/// when done.
public final class PasswordHasher: Sendable {
    /// The cost parameters used for new hashes and for ``needsRehash(_:)``.
    public let parameters: PasswordHashing
    /// Worker threads: how many hashes run at once.
    public let threads: Int

    private let pool: NIOThreadPool
    /// Hash of a random secret with `parameters`, for ``verifyDummy(_:)``; computed once.
    private let dummyHash = Mutex<String?>(nil)

    /// Starts a hasher with `threads` worker threads (at least 1).
    ///
    /// The dummy hash for ``verifyDummy(_:)`` is precomputed in the background on the pool.
    public init(parameters: PasswordHashing = .interactive, threads: Int = 2) {
        precondition(threads >= 1, "PasswordHasher needs at least one thread")
        SodiumRuntime.ensureInitialized()
        self.parameters = parameters
        self.threads = threads
        self.pool = NIOThreadPool(numberOfThreads: threads)
        self.pool.start()
        self.pool.submit { [self] state in
            guard case .active = state else { return }
            _ = self.cachedDummyHash()
        }
    }

    deinit {
        // Safety net if shutdown() was never awaited; a no-op when already shut down.
        pool.shutdownGracefully { _ in }
    }

    /// Hashes `password` with a fresh random salt; returns the `$argon2id$...` string to store.
    public func hash(_ password: String) async throws(PasswordHashingError) -> String {
        try await hash(password, parameters: parameters)
    }

    /// Hashes `password` with other cost parameters than this hasher's own (a hunt's claim codes),
    /// on the same threads; ``verify(_:against:)`` reads the parameters from the hash.
    public func hash(_ password: String, parameters: PasswordHashing) async throws(PasswordHashingError) -> String {
        let result: Result<String, PasswordHashingError>
        do {
            result = try await pool.runIfActive {
                Result { () throws(PasswordHashingError) -> String in
                    try Self.hashSync(password, parameters: parameters)
                }
            }
        } catch is CancellationError where Task.isCancelled {
            throw .cancelled
        } catch {
            // NIOThreadPool reports work submitted after shutdown as cancelled too.
            throw .shutDown
        }
        return try result.get()
    }

    /// Checks `password` against a stored hash in constant time.
    /// Returns `false` for a wrong password, a malformed hash, or a shut-down hasher.
    public func verify(_ password: String, against hash: String) async -> Bool {
        (try? await pool.runIfActive { Self.verifySync(password, against: hash) }) ?? false
    }

    /// Spends the same work as a failed ``verify(_:against:)``, for logins naming an unknown user,
    /// so response time does not reveal whether the account exists.
    public func verifyDummy(_ password: String) async {
        _ = try? await pool.runIfActive { [self] in
            guard let dummy = self.cachedDummyHash() else { return false }
            return Self.verifySync(password, against: dummy)
        }
    }

    /// `true` if `hash` was not made with argon2id and this hasher's ``parameters``
    /// (or is malformed), i.e. it should be replaced after the next successful login.
    public func needsRehash(_ hash: String) -> Bool {
        Self.needsRehash(hash, parameters: parameters)
    }

    /// Stops the worker threads, waiting for work in progress; later calls fail or return `false`.
    public func shutdown() async {
        try? await pool.shutdownGracefully()
    }

    private func cachedDummyHash() -> String? {
        let parameters = self.parameters
        return dummyHash.withLock { cached -> String? in
            if let cached { return cached }
            let fresh = try? Self.hashSync(SecureRandom.token(), parameters: parameters)
            cached = fresh
            return fresh
        }
    }
}

// MARK: - Blocking primitives

extension PasswordHasher {
    /// Blocking ``hash(_:)``. Takes tens of milliseconds: never call it on an event loop or from
    /// async code; use an instance's async methods instead.
    public static func hashSync(
        _ password: String,
        parameters: PasswordHashing = .interactive
    ) throws(PasswordHashingError) -> String {
        SodiumRuntime.ensureInitialized()
        guard password.utf8.count <= crypto_pwhash_passwd_max() else { throw .passwordTooLong }
        var out = [CChar](repeating: 0, count: crypto_pwhash_strbytes())
        let status = withPasswordBytes(password) { passwd, length in
            out.withUnsafeMutableBufferPointer { buffer in
                crypto_pwhash_str_alg(
                    buffer.baseAddress!,
                    passwd, UInt64(length),
                    UInt64(parameters.opsLimit), parameters.memLimit,
                    crypto_pwhash_alg_argon2id13()
                )
            }
        }
        guard status == 0 else { throw .hashingFailed }
        let end = out.firstIndex(of: 0) ?? out.endIndex
        return String(decoding: out[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Blocking ``verify(_:against:)``: constant-time, `false` for a malformed hash.
    /// Same cost as hashing: never call it on an event loop or from async code.
    public static func verifySync(_ password: String, against hash: String) -> Bool {
        SodiumRuntime.ensureInitialized()
        guard password.utf8.count <= crypto_pwhash_passwd_max() else { return false }
        let status = withHashCString(hash) { str in
            withPasswordBytes(password) { passwd, length in
                crypto_pwhash_str_verify(str, passwd, UInt64(length))
            }
        }
        return status == 0
    }

    /// `true` if `hash` is not an argon2id hash made with exactly `parameters` (or is malformed).
    /// Only parses the string; cheap.
    public static func needsRehash(_ hash: String, parameters: PasswordHashing) -> Bool {
        SodiumRuntime.ensureInitialized()
        // The generic libsodium check also accepts argon2i hashes; we want argon2id only.
        guard hash.hasPrefix("$argon2id$") else { return true }
        let status = withHashCString(hash) { str in
            crypto_pwhash_str_needs_rehash(str, UInt64(parameters.opsLimit), parameters.memLimit)
        }
        return status != 0
    }

    /// Calls `body` with the password's UTF-8 bytes (explicit length, so NUL is allowed),
    /// then wipes the copy.
    private static func withPasswordBytes<R>(
        _ password: String,
        _ body: (UnsafePointer<CChar>, Int) -> R
    ) -> R {
        var bytes = Array(password.utf8)
        let length = bytes.count
        bytes.append(0)  // guarantees a non-nil pointer even for an empty password
        defer {
            bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress!, $0.count) }
        }
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress!, length) }
        }
    }

    /// Calls `body` with `hash` as a NUL-padded buffer of `crypto_pwhash_STRBYTES` chars, the size
    /// libsodium's API declares; `nil` if the hash cannot fit or contains NUL (malformed).
    private static func withHashCString<R>(_ hash: String, _ body: (UnsafePointer<CChar>) -> R) -> R? {
        let size = crypto_pwhash_strbytes()
        let utf8 = Array(hash.utf8)
        guard utf8.count < size, !utf8.contains(0) else { return nil }
        var buffer = [CChar](repeating: 0, count: size)
        for (index, byte) in utf8.enumerated() {
            buffer[index] = CChar(bitPattern: byte)
        }
        return buffer.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
