import DequeModule
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
        var pending = Deque<(watch: String?, text: String)>()
        var bytes = 0
        /// Watches that overflowed: to end once out of the hub's lock.
        var overflowed: [String] = []
        var waiter: CheckedContinuation<Void, Never>?
        var closed = false
    }

    private let maxBytes: Int
    private let state = Mutex(State())
    /// The session whose watches these are; set once the session exists.
    private let owner = Mutex<Session?>(nil)

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    func bind(_ session: Session) {
        owner.withLock { $0 = session }
    }

    func deliver(_ events: [WatchEvent]) {
        guard let session = owner.withLock({ $0 }) else { return }
        var scratch: [UInt8] = []
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.closed else { return nil }
            for event in events where session.holdsWatch(event.watch) && !state.overflowed.contains(event.watch) {
                if case .overflow = event {
                    Self.overflow(event.watch, &state)
                    continue
                }
                scratch.removeAll(keepingCapacity: true)
                EventLine.encode(event, into: &scratch)
                if scratch.last == UInt8(ascii: "\n") { scratch.removeLast() }
                state.pending.append((event.watch, String(decoding: scratch, as: UTF8.self)))
                state.bytes += scratch.count
                if state.bytes > maxBytes { Self.overflow(event.watch, &state) }
            }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Drops the watch's waiting events and queues its `overflow`.
    private static func overflow(_ watch: String, _ state: inout State) {
        state.pending.removeAll { $0.watch == watch }
        state.bytes = state.pending.reduce(0) { $0 + $1.text.utf8.count }
        var line = EventLine.overflow(watch: watch)
        if line.last == UInt8(ascii: "\n") { line.removeLast() }
        state.pending.append((nil, String(decoding: line, as: UTF8.self)))
        state.bytes += line.count
        state.overflowed.append(watch)
    }

    /// The next events to write, and the watches that overflowed meanwhile; nil once closed.
    func next() async -> (events: [(watch: String?, text: String)], overflowed: [String])? {
        while true {
            let taken = state.withLock { state -> (events: [(watch: String?, text: String)], overflowed: [String])?? in
                if state.closed { return .some(nil) }
                guard !state.pending.isEmpty || !state.overflowed.isEmpty else { return nil }
                let events = Array(state.pending)
                let overflowed = state.overflowed
                state.pending.removeAll()
                state.bytes = 0
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
