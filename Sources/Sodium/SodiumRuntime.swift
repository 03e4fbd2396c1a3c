internal import CSodium

/// One-time libsodium initialisation shared by every entry point of this module.
enum SodiumRuntime {
    /// Swift runs a static stored property's initialiser exactly once, thread-safely.
    private static let initialized: Bool = {
        // 0 = initialised now, 1 = already initialised, -1 = failure.
        guard sodium_init() >= 0 else {
            fatalError("sodium_init() failed: libsodium is unusable")
        }
        return true
    }()

    /// Makes sure `sodium_init()` has run. Cheap after the first call.
    @inline(__always)
    static func ensureInitialized() {
        _ = initialized
    }
}
