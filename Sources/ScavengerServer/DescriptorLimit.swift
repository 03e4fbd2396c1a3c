#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`), which caps how many
/// connections can be open at once: past it, `accept` fails and clients wait in the backlog
/// instead of hearing `ERR UNAVAILABLE`.
public enum DescriptorLimit {
    /// What ``fit(connections:spare:)`` did.
    public struct Fitting: Sendable, Equatable {
        /// The soft limit before, and after.
        public var before: Int
        public var after: Int
        /// How many connections fit under it: all that were asked for, or fewer.
        public var connections: Int
    }

    /// Raises the soft limit (up to the hard one) so that `connections` plus `spare` descriptors
    /// (the database, the listeners, refused connections on their way out, logs) fit; when the
    /// hard limit is too low, answers how many connections do fit (at least one).
    public static func fit(connections: Int, spare: Int) -> Fitting {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else {
            return Fitting(before: -1, after: -1, connections: connections)
        }
        let before = Int(clamping: limit.rlim_cur)
        let needed = connections + spare
        if before < needed {
            var raised = limit
            raised.rlim_cur = min(limit.rlim_max, rlim_t(needed))
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        let after = Int(clamping: limit.rlim_cur)
        return Fitting(before: before, after: after, connections: max(1, min(connections, after - spare)))
    }

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}
