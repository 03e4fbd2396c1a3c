import ScavengerBoard
import ScavengerCore
import ScavengerProtocol
import Synchronization

/// A WebSocket's watch events: the hub hands them here (from any thread, while it is locked), a
/// task of the socket's own writes them, each event one text message. Events wait here while
/// the socket is slow; past `maxBytes` waiting, the watch at fault gets `overflow` and ends, as
/// on the TCP port.
final class WebSocketEvents: WatchSink {
    private struct State {
        var pending: PendingWatchEvents
        /// Watches that overflowed: to end once out of the hub's lock.
        var overflowed: [String] = []
        var waiter: CheckedContinuation<Void, Never>?
        var closed = false
    }

    private let state: Mutex<State>
    /// The session whose watches these are; set once the session exists.
    private let owner = Mutex<Session?>(nil)

    init(maxBytes: Int) {
        state = Mutex(State(pending: PendingWatchEvents(maximumBytes: maxBytes)))
    }

    func bind(_ session: Session) {
        owner.withLock { $0 = session }
    }

    func deliver(_ events: [WatchEvent]) {
        guard let session = owner.withLock({ $0 }) else { return }
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.closed else { return nil }
            state.overflowed += state.pending.add(events, holds: session.holdsWatch)
            // A closed watch is let go like an overflowed one, once its last line is written.
            for case .closed(let watch, _) in events where session.holdsWatch(watch) { state.overflowed.append(watch) }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The next events to write, and the watches that overflowed meanwhile; nil once closed.
    func next() async -> (events: [(watch: String?, text: String)], overflowed: [String])? {
        while true {
            let taken = state.withLock { state -> (events: [(watch: String?, text: String)], overflowed: [String])?? in
                if state.closed { return .some(nil) }
                guard !state.pending.isEmpty || !state.overflowed.isEmpty else { return nil }
                // One text message per line, without its newline.
                let events = state.pending.takeAll().map { line in
                    (line.watch, String(decoding: line.bytes.dropLast(line.bytes.last == UInt8(ascii: "\n") ? 1 : 0), as: UTF8.self))
                }
                let overflowed = state.overflowed
                state.pending.ended(overflowed)
                state.overflowed = []
                return .some((events, overflowed))
            }
            if let taken { return taken }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.closed || !state.pending.isEmpty || !state.overflowed.isEmpty { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// Ends the writer.
    func close() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.closed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
