import DequeModule
import Sodium
import Synchronization

/// The line in front of the password hasher: at most as many checks run as it has threads, at
/// most ``maximumWaiting`` wait, and the rest are refused at once (`UNAVAILABLE`), so a storm of
/// logins costs a bounded queue, not unbounded memory and minutes of delay.
///
/// Two lanes: checks from addresses with no failures on record go first. A guessing storm, once
/// its first guesses have failed, waits behind every real user; when the queue is full, a check
/// from a clean address takes the place of the newest one from a failing address. A check whose
/// client has gone by its turn is dropped without hashing.
public final class PasswordQueue: Sendable {
    public let hasher: PasswordHasher
    /// Checks that may wait for a thread.
    public let maximumWaiting: Int
    private let workers: Int
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var running = 0
        var first = Deque<Turn>()
        var second = Deque<Turn>()
        var waiting: Int { first.count + second.count }
    }

    private typealias Turn = CheckedContinuation<Bool, Never>

    public init(hasher: PasswordHasher, maximumWaiting: Int = 64) {
        self.hasher = hasher
        self.maximumWaiting = max(0, maximumWaiting)
        self.workers = hasher.threads
    }

    /// Checks waiting for a thread now.
    public var waiting: Int { state.withLock { $0.waiting } }

    /// Checks holding a thread now.
    public var running: Int { state.withLock { $0.running } }

    /// Runs `work` with the hasher when its turn comes; `first` puts it in the first lane.
    /// Refuses with `UNAVAILABLE` when the queue is full (or it was pushed out of it), and with
    /// `UNAVAILABLE` too when `isWanted` says no by then (the client left; nobody hears it).
    public func run<T: Sendable>(
        first: Bool, isWanted: @Sendable () -> Bool, _ work: @Sendable (PasswordHasher) async throws -> T
    ) async throws -> T {
        guard await turn(first: first) else { throw Self.full }
        defer { next() }
        guard isWanted() else { throw BoardError(.unavailable, "the client has gone") }
        return try await work(hasher)
    }

    static let full = BoardError(.unavailable, "the server is busy checking passwords; retry in a moment")

    /// Waits for a thread; false when refused.
    private func turn(first: Bool) async -> Bool {
        if state.withLock({ state in
            guard state.running < workers else { return false }
            state.running += 1
            return true
        }) { return true }
        return await withCheckedContinuation { (turn: Turn) in
            let (decision, pushedOut) = state.withLock { state -> (Decision, Turn?) in
                if state.running < workers {
                    state.running += 1
                    return (.runNow, nil)
                }
                if state.waiting < maximumWaiting {
                    if first { state.first.append(turn) } else { state.second.append(turn) }
                    return (.queued, nil)
                }
                if first, let newest = state.second.popLast() {
                    state.first.append(turn)
                    return (.queued, newest)
                }
                return (.refused, nil)
            }
            pushedOut?.resume(returning: false)
            switch decision {
            case .runNow: turn.resume(returning: true)
            case .refused: turn.resume(returning: false)
            case .queued: break
            }
        }
    }

    private enum Decision { case runNow, queued, refused }

    /// Gives the thread to the next waiting check, or frees it.
    private func next() {
        let waiter = state.withLock { state -> Turn? in
            if let turn = state.first.popFirst() ?? state.second.popFirst() { return turn }
            state.running -= 1
            return nil
        }
        waiter?.resume(returning: true)
    }
}
