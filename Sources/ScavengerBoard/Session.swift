import ScavengerCore
import Synchronization

/// The state of one client connection: who is logged in, under which session.
public final class Session: Sendable {
    /// A number for logs, unique within the process.
    public let connectionID: Int
    private let state = Mutex<State>(State())

    struct State {
        var user: User?
        var userID: Int?
        var tokenHash: [UInt8]?
    }

    public init(connectionID: Int) {
        self.connectionID = connectionID
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
