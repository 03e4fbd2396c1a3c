internal import CSodium

/// Hashing and comparison helpers backed by libsodium.
public enum Digest {
    /// Length in bytes of a SHA-256 digest.
    public static let sha256ByteCount = 32

    /// SHA-256 of `bytes` (`crypto_hash_sha256`); always 32 bytes.
    public static func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] {
        SodiumRuntime.ensureInitialized()
        if let digest = bytes.withContiguousStorageIfAvailable({ sha256(buffer: $0) }) {
            return digest
        }
        return Array(bytes).withUnsafeBufferPointer { sha256(buffer: $0) }
    }

    /// SHA-256 of the UTF-8 encoding of `string`; always 32 bytes.
    public static func sha256(_ string: String) -> [UInt8] {
        sha256(Array(string.utf8))
    }

    private static func sha256(buffer: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: sha256ByteCount) { out, initializedCount in
            // An empty buffer may have a nil base address; hand libsodium a valid pointer anyway.
            var empty: UInt8 = 0
            let result = withUnsafePointer(to: &empty) { emptyPointer in
                crypto_hash_sha256(out.baseAddress!, buffer.baseAddress ?? emptyPointer, UInt64(buffer.count))
            }
            precondition(result == 0, "crypto_hash_sha256 failed")
            initializedCount = sha256ByteCount
        }
    }

    /// HMAC-SHA-256 of the UTF-8 encoding of `message` under `key` (`crypto_auth_hmacsha256`, any
    /// key length); always 32 bytes.
    public static func hmacSHA256(key: [UInt8], _ message: String) -> [UInt8] {
        SodiumRuntime.ensureInitialized()
        var state = crypto_auth_hmacsha256_state()
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        var empty: UInt8 = 0
        key.withUnsafeBufferPointer { keyBuffer in
            withUnsafePointer(to: &empty) { emptyPointer in
                precondition(crypto_auth_hmacsha256_init(&state, keyBuffer.baseAddress ?? emptyPointer, keyBuffer.count) == 0)
            }
        }
        var bytes = Array(message.utf8)
        bytes.withUnsafeMutableBufferPointer { buffer in
            withUnsafePointer(to: &empty) { emptyPointer in
                precondition(crypto_auth_hmacsha256_update(&state, buffer.baseAddress.map { UnsafePointer($0) } ?? emptyPointer, UInt64(buffer.count)) == 0)
            }
        }
        precondition(crypto_auth_hmacsha256_final(&state, &out) == 0)
        return out
    }

    /// Compares two byte arrays in time independent of their contents (`sodium_memcmp`).
    /// Returns `false` when the lengths differ (the length itself is not secret).
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        SodiumRuntime.ensureInitialized()
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in
                sodium_memcmp(pa.baseAddress!, pb.baseAddress!, a.count) == 0
            }
        }
    }
}
