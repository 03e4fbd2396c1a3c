import ScavengerCore
import Synchronization

/// The state of one client connection: who is logged in, under which session.
public final class Session: Sendable {
    /// A number for logs, unique within the process.
    public let connectionID: Int
    /// The client's address as throttles count it (``ClientAddress``); nil when it has none.
    public let address: String?
    private let state = Mutex<State>(State())
    private let connected = Atomic<Bool>(true)

    struct State {
        var user: User?
        var userID: Int?
        var tokenHash: [UInt8]?
    }

    public init(connectionID: Int, address: String? = nil) {
        self.connectionID = connectionID
        self.address = address
    }

    /// False once the connection has closed: work still queued for it can be dropped.
    public var isConnected: Bool { connected.load(ordering: .relaxed) }

    /// Marks the connection closed.
    public func disconnect() {
        connected.store(false, ordering: .relaxed)
    }

    /// The logged-in user, if any.
    public var user: User? { state.withLock { $0.user } }

    /// The hash of this connection's session token, if logged in.
    public var tokenHash: [UInt8]? { state.withLock { $0.tokenHash } }

    /// The session token's hash, user id and user, if logged in.
    public var login: (tokenHash: [UInt8], userID: Int, user: User)? {
        state.withLock { state in
            guard let tokenHash = state.tokenHash, let userID = state.userID, let user = state.user else { return nil }
            return (tokenHash, userID, user)
        }
    }

    /// Records a login.
    public func logIn(user: User, userID: Int, tokenHash: [UInt8]) {
        state.withLock { $0 = State(user: user, userID: userID, tokenHash: tokenHash) }
    }

    /// Forgets the login.
    public func logOut() {
        state.withLock { $0 = State() }
    }
}
