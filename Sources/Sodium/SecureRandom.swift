internal import CSodium

/// Cryptographically secure random bytes from libsodium (`randombytes_buf`).
public enum SecureRandom {
    /// Returns `count` random bytes. `count` must not be negative.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "SecureRandom.bytes: negative count")
        SodiumRuntime.ensureInitialized()
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initializedCount in
            if let base = buffer.baseAddress, count > 0 {
                randombytes_buf(base, count)
            }
            initializedCount = count
        }
    }

    /// A fresh 256-bit token as 64 lowercase hex characters (e.g. for session tokens).
    public static func token() -> String {
        Hex.encode(bytes(32))
    }
}
