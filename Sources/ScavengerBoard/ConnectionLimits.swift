import Synchronization

/// Connections open at once, in all and from each client address, counted across every port of
/// one daemon (the line port, its TLS port and the HTTP port): a client cannot get round the
/// limits by switching ports. Each admitted connection leaves exactly once, when it closes.
public final class ConnectionLimits: Sendable {
    /// Connections served at once (`--max-connections`).
    public let maximum: Int
    /// Connections served at once from one client address (`--max-connections-per-address`).
    public let maximumPerAddress: Int
    /// Refused connections answered at once (each holds its descriptor while its refusal is
    /// written and it lingers): past them, a refused connection is closed unanswered, so a storm
    /// cannot use up the process's descriptors (the runtime itself needs some, and stops the
    /// process when an open fails).
    public let maximumRefusing: Int

    /// Why a connection was not admitted.
    public enum Refusal: Error, Sendable, Equatable {
        /// `maximum` connections are open.
        case full(limit: Int)
        /// `maximumPerAddress` connections from this address are open.
        case addressFull(limit: Int)

        /// What the client is told, on every port.
        public var message: String {
            switch self {
            case .full(let limit): "the server is at its connection limit (\(limit)); retry later"
            case .addressFull(let limit): "too many connections from your address (at most \(limit)); retry later"
            }
        }
    }

    /// An admitted connection: hand it back to ``leave(_:)`` once, when the connection closes.
    public struct Admission: Sendable {
        let address: String?
    }

    private struct State {
        var open = 0
        var perAddress: [String: Int] = [:]
        var refusing = 0
        var refusedSinceLog = 0
        var lastRefusalLog: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    public init(maximum: Int, maximumPerAddress: Int, maximumRefusing: Int = 64) {
        self.maximum = maximum
        self.maximumPerAddress = maximumPerAddress
        self.maximumRefusing = maximumRefusing
    }

    /// Whether a refused connection may be answered (its refusal written, then its linger): then
    /// call ``releaseRefusal()`` once when it closes. False when ``maximumRefusing`` are already
    /// on their way out: close it at once, unanswered.
    public func holdRefusal() -> Bool {
        state.withLock { state in
            guard state.refusing < maximumRefusing else { return false }
            state.refusing += 1
            return true
        }
    }

    /// A refused connection that ``holdRefusal()`` let answer has closed.
    public func releaseRefusal() {
        state.withLock { $0.refusing -= 1 }
    }

    /// Refused connections being answered now.
    public var refusing: Int { state.withLock { $0.refusing } }

    /// Connections open now, on every port.
    public var count: Int { state.withLock { $0.open } }

    /// Admits a connection from `address` (nil: a connection with no IP address, counted only
    /// in all) unless a limit is reached.
    public func admit(address: String?) -> Result<Admission, Refusal> {
        state.withLock { state in
            guard state.open < maximum else { return .failure(.full(limit: maximum)) }
            if let address {
                guard state.perAddress[address, default: 0] < maximumPerAddress else {
                    return .failure(.addressFull(limit: maximumPerAddress))
                }
                state.perAddress[address, default: 0] += 1
            }
            state.open += 1
            return .success(Admission(address: address))
        }
    }

    /// Counts an admitted connection under another address from now on (a connection from a
    /// trusted proxy, admitted with nil, once it has said whom it carries); refused when that
    /// address is at its limit, in which case `admission` stands as it was.
    public func readdress(_ admission: Admission, to address: String?) -> Result<Admission, Refusal> {
        state.withLock { state in
            guard address != admission.address else { return .success(admission) }
            if let address {
                guard state.perAddress[address, default: 0] < maximumPerAddress else {
                    return .failure(.addressFull(limit: maximumPerAddress))
                }
                state.perAddress[address, default: 0] += 1
            }
            if let old = admission.address {
                state.perAddress[old, default: 1] -= 1
                if state.perAddress[old] == 0 { state.perAddress[old] = nil }
            }
            return .success(Admission(address: address))
        }
    }

    /// Frees an admitted connection's place. Call it once per admission.
    public func leave(_ admission: Admission) {
        state.withLock { state in
            state.open -= 1
            if let address = admission.address {
                state.perAddress[address, default: 1] -= 1
                if state.perAddress[address] == 0 { state.perAddress[address] = nil }
            }
        }
    }

    /// Counts a refused connection; returns how many to report in one log line, at most once per
    /// `interval` (a storm of refusals must not become a storm of log lines), else nil.
    public func noteRefusal(every interval: Duration = .seconds(1), now: ContinuousClock.Instant = .now) -> Int? {
        state.withLock { state in
            state.refusedSinceLog += 1
            if let last = state.lastRefusalLog, now - last < interval { return nil }
            state.lastRefusalLog = now
            defer { state.refusedSinceLog = 0 }
            return state.refusedSinceLog
        }
    }
}
