import Synchronization

/// A gate work can wait at until the test opens it.
public final class Gate: Sendable {
    private let waiters = Mutex<[CheckedContinuation<Void, Never>]?>([])

    public init() {}

    public func wait() async {
        await withCheckedContinuation { continuation in
            let open = waiters.withLock { waiters -> Bool in
                guard waiters != nil else { return true }
                waiters!.append(continuation)
                return false
            }
            if open { continuation.resume() }
        }
    }

    public func open() {
        for waiter in waiters.withLock({ waiters in defer { waiters = nil }; return waiters ?? [] }) { waiter.resume() }
    }
}
