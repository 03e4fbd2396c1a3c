import ScavengerCore
import Synchronization

/// The state of one client connection: who is logged in, under which session.
public final class Session: Sendable {
    /// A number for logs, unique within the process.
    public let connectionID: Int
    /// The client's address as throttles count it (``ClientAddress``); nil when it has none.
    public let address: String?
    /// Where this connection's watch events go; nil for a connection that cannot receive any
    /// (its watches then report nothing).
    public let eventSink: (any WatchSink)?
    private let state = Mutex<State>(State())
    private let connected = Atomic<Bool>(true)

    struct State {
        var user: User?
        var userID: Int?
        var tokenHash: [UInt8]?
    }

    /// The ids of the watches this connection holds.
    private let watchIDs = Mutex<Set<String>>([])

    public init(connectionID: Int, address: String? = nil, eventSink: (any WatchSink)? = nil) {
        self.connectionID = connectionID
        self.address = address
        self.eventSink = eventSink
    }

    /// The watches this connection holds.
    public var watches: Set<String> { watchIDs.withLock { $0 } }

    /// Whether this connection holds the watch.
    public func holdsWatch(_ id: String) -> Bool { watchIDs.withLock { $0.contains(id) } }

    /// Whether another watch fits under `limit`.
    func hasRoomForWatch(limit: Int) -> Bool { watchIDs.withLock { $0.count < limit } }

    /// Records a watch already started (its events are held until its reply is out, so none is
    /// lost for want of the id here).
    func insertWatch(_ id: String) { _ = watchIDs.withLock { $0.insert(id) } }

    /// Forgets a watch; false when not held.
    func removeWatch(_ id: String) -> Bool { watchIDs.withLock { $0.remove(id) != nil } }

    /// Forgets every watch; returns their ids.
    func removeAllWatches() -> Set<String> {
        watchIDs.withLock { ids in
            defer { ids = [] }
            return ids
        }
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

    /// Forgets the login if it is the session of `tokenHash`; whether it was.
    func logOut(ifTokenHash tokenHash: [UInt8]) -> Bool {
        state.withLock { state in
            guard state.tokenHash == tokenHash else { return false }
            state = State()
            return true
        }
    }
}
