import Sodium

/// Random tokens and digests for front ends that keep secrets of their own (the console's
/// CSRF tokens), from the same libsodium the board uses for sessions.
public enum Secrets {
    /// A new random token (URL-safe text), as unguessable as a session token.
    public static func randomToken() -> String {
        SecureRandom.token()
    }

    /// SHA-256 of `text`, as lowercase hex.
    public static func digestHex(_ text: String) -> String {
        Hex.encode(Digest.sha256(text))
    }

    /// Whether two texts are equal, compared through their digests in constant time.
    public static func constantTimeEqual(_ given: String, _ expected: String) -> Bool {
        Digest.constantTimeEqual(Digest.sha256(given), Digest.sha256(expected))
    }
}
