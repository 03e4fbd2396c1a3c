/// Limits of the protocol that operators can configure.
public struct ProtocolLimits: Sendable {
    /// Longest request line in bytes (the line ending not counted); default 8 MiB.
    public var maxLineBytes: Int

    public init(maxLineBytes: Int = 8 * 1024 * 1024) {
        self.maxLineBytes = maxLineBytes
    }
}

/// The versions `HELLO` reports.
public enum ServerVersion {
    /// The daemon's version.
    public static let daemon = "0.1.0"
    /// The version of the line protocol this daemon speaks.
    public static let protocolVersion = 1
}
