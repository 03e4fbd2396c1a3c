import NIOCore
import Synchronization

/// Deadlines for work that nearly always ends first, kept where arming and cancelling one cost
/// a lock and nothing else: no task on the timer's event loop and no wake-up of its thread.
///
/// The loop is woken only when a deadline earlier than every armed one arrives (or the first
/// one after an idle spell). A pool's deadlines are all "now + the command timeout", each later
/// than the last, so under load the loop wakes about once per timeout, not twice per query as
/// a NIO `Scheduled` per query (scheduled and cancelled from a pool thread) made it.
final class DeadlineTimer: Sendable {
    /// One armed deadline, to cancel once its work is done.
    struct Handle: Sendable {
        fileprivate let timer: DeadlineTimer
        fileprivate let id: UInt64

        /// Forgets the deadline; its action will not run (unless it already has).
        func cancel() {
            timer.cancel(id)
        }
    }

    private struct Entry {
        var deadline: NIODeadline
        var action: @Sendable () -> Void
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
        /// When the loop looks next (a task is scheduled for then), if it will.
        var armedFor: NIODeadline?
    }

    private let loop: any EventLoop
    private let state = Mutex(State())

    init(loop: any EventLoop) {
        self.loop = loop
    }

    /// Runs `action` on the timer's loop once `deadline` has passed, unless cancelled first.
    func schedule(at deadline: NIODeadline, _ action: @escaping @Sendable () -> Void) -> Handle {
        let (id, needsArming) = state.withLock { state -> (UInt64, Bool) in
            state.nextID += 1
            state.entries[state.nextID] = Entry(deadline: deadline, action: action)
            if let armed = state.armedFor, armed <= deadline { return (state.nextID, false) }
            state.armedFor = deadline
            return (state.nextID, true)
        }
        if needsArming { arm(for: deadline) }
        return Handle(timer: self, id: id)
    }

    /// How many deadlines are armed, for tests.
    var count: Int {
        state.withLock { $0.entries.count }
    }

    private func cancel(_ id: UInt64) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    private func arm(for deadline: NIODeadline) {
        loop.scheduleTask(deadline: deadline) { self.fire() }
    }

    /// On the loop: runs every passed deadline's action and arms for the earliest left. A task
    /// armed for a later time than an earlier one re-armed since finds nothing due, and leaves
    /// the arming as it is.
    private func fire() {
        // The loop's time: the system's on a real loop, the test's on an `EmbeddedEventLoop`.
        let now = loop.now
        let (due, next) = state.withLock { state -> ([@Sendable () -> Void], NIODeadline?) in
            var dueIDs: [UInt64] = []
            var earliest: NIODeadline?
            for (id, entry) in state.entries {
                if entry.deadline <= now {
                    dueIDs.append(id)
                } else if earliest.map({ entry.deadline < $0 }) ?? true {
                    earliest = entry.deadline
                }
            }
            let due = dueIDs.compactMap { state.entries.removeValue(forKey: $0)?.action }
            if let armed = state.armedFor, armed <= now { state.armedFor = nil }
            guard let earliest, state.armedFor.map({ earliest < $0 }) ?? true else { return (due, nil) }
            state.armedFor = earliest
            return (due, earliest)
        }
        if let next { arm(for: next) }
        for action in due { action() }
    }
}
