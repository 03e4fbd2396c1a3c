import DequeModule
import ScavengerCore
import Synchronization

/// Watch events gathered for their sinks, each sink's in the order they happened: what a change
/// (or a batch of them) makes for the watches it concerns, before anything is handed over.
struct WatchOutbox {
    private var batches: [(sink: any WatchSink, events: [WatchEvent])] = []
    /// Each sink's place in `batches`.
    private var places: [ObjectIdentifier: Int] = [:]

    var isEmpty: Bool { batches.isEmpty }

    /// The events gathered for every sink.
    var eventCount: Int { batches.reduce(0) { $0 + $1.events.count } }

    /// Adds `event` after the others gathered for `sink`.
    mutating func add(_ event: WatchEvent, for sink: any WatchSink) {
        let key = ObjectIdentifier(sink)
        if let place = places[key] {
            batches[place].events.append(event)
        } else {
            places[key] = batches.count
            batches.append((sink, [event]))
        }
    }

    /// Hands each sink its events in one call, sinks in the order they were first given one.
    func deliver() {
        for batch in batches { batch.sink.deliver(batch.events) }
    }
}

/// Hands the hunts' watch events to their sinks outside the feed's lock, in the order the lock
/// made them.
///
/// Why a queue, and not each caller delivering its own events once it lets go of the lock: two
/// tasks make events for the same watchers, a catch-up applying the log (``HuntFeed/catchUp()``)
/// and the listener's announcement of hunts the clock started or ended
/// (``HuntFeed/announceScheduledChanges(at:)``); catch-ups run one at a time
/// (``CatchUpTurns``), but an announcement runs beside them. Were each to deliver on its own
/// after the lock, the one that made its events second could hand them over first: a watcher
/// would hear `hunt` (ended, by the clock) and then `hunt` (running, from an `EXTEND` applied
/// before it), the hunt's last word wrong. So each batch is queued while the lock that made it
/// is still held (``enqueue(_:)``): the queue's order is the lock's. After the lock is let go,
/// one caller at a time delivers what is queued, oldest first, until the queue is empty; a
/// caller that finds another delivering leaves its batch to that one. So every watcher hears
/// its hunt's events in log order, each once, and no lock of the feed's is held while a sink
/// runs: a sink may call back into the feed (even make events: they queue behind its own).
///
/// A catch-up waits (``deliver(through:)``) until its batch is handed over, so that when it
/// returns its watchers have their events, before the reply to the write that caused them.
///
/// Locks: ``state`` only, a leaf (taken inside the feed's lock by ``enqueue(_:)``), never held
/// while a sink is called.
final class WatchDelivery: Sendable {
    private typealias Waiter = CheckedContinuation<Void, Never>

    private struct State: ~Copyable {
        /// Batches not yet handed over, each with its number, oldest first.
        var queue = Deque<(ticket: Int, events: WatchOutbox)>()
        /// The number of the last batch queued.
        var queued = 0
        /// Every batch up to this number has been handed over.
        var delivered = 0
        /// Whether some caller is handing batches over now.
        var delivering = false
        /// Callers waiting until the batch of that number has been handed over.
        var waiters: [(ticket: Int, waiter: Waiter)] = []
    }

    private let state = Mutex(State())

    /// Batches queued and not yet handed over (for tests).
    var pending: Int { state.withLock { $0.queued - $0.delivered } }

    /// Queues `events` behind every batch queued before; returns the batch's number, nil when
    /// there is nothing to hand over. Call it while holding the lock the events were made under.
    @discardableResult
    func enqueue(_ events: WatchOutbox) -> Int? {
        guard !events.isEmpty else { return nil }
        return state.withLock { state in
            state.queued += 1
            state.queue.append((state.queued, events))
            return state.queued
        }
    }

    /// Hands over every batch queued, oldest first, unless another caller is doing so already
    /// (then that one hands them over, after the batches it is at); returns whether this caller
    /// did. Called with no lock of the feed's held.
    @discardableResult
    func deliverQueued() -> Bool {
        let leads = state.withLock { state -> Bool in
            guard !state.delivering, !state.queue.isEmpty else { return false }
            state.delivering = true
            return true
        }
        guard leads else { return false }
        var finished: Int?
        while true {
            let (next, woken) = state.withLock { state -> ((ticket: Int, events: WatchOutbox)?, [Waiter]) in
                var woken: [Waiter] = []
                if let finished {
                    state.delivered = finished
                    woken = state.waiters.filter { $0.ticket <= finished }.map(\.waiter)
                    state.waiters.removeAll { $0.ticket <= finished }
                }
                guard let next = state.queue.popFirst() else {
                    state.delivering = false
                    return (nil, woken)
                }
                return (next, woken)
            }
            for waiter in woken { waiter.resume() }
            guard let next else { return true }
            next.events.deliver()
            finished = next.ticket
        }
    }

    /// Returns once batch `ticket` (from ``enqueue(_:)``; nil: none) has been handed over, by this
    /// caller or by the one delivering when it came.
    func deliver(through ticket: Int?) async {
        guard let ticket, !deliverQueued() else { return }
        // Another caller is delivering (or has just handed this batch over): it stops only once
        // the queue, this batch included, is empty, and answers every waiter it passes.
        await withCheckedContinuation { (waiter: Waiter) in
            let done = state.withLock { state -> Bool in
                guard state.delivered < ticket else { return true }
                state.waiters.append((ticket, waiter))
                return false
            }
            if done { waiter.resume() }
        }
    }
}
