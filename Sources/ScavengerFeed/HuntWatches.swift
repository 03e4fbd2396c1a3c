import ScavengerCore
import ScavengerStore

/// The `WATCH HUNT` watches, by hunt, and what each watched hunt looked like when its watchers
/// last heard of it: turns what happens to a hunt into events for its watchers, gathered in a
/// ``WatchOutbox`` (handed over later, outside the lock these are kept under).
struct HuntWatches {
    /// A watch, and the watching player's name in the hunt (nil for its host): a player's
    /// watches close when they leave.
    struct Watcher {
        var hunt: String
        var player: String?
        var sink: any WatchSink
    }

    /// A watched hunt as its watchers last heard of it: the automatic start and end are
    /// announced when its state at the clock differs from `announcedState`.
    struct WatchedHunt {
        var record: HuntRecord
        var announcedState: HuntState
        var watchers: Set<String>
    }

    private var watchers: [String: Watcher] = [:]
    private var watched: [String: WatchedHunt] = [:]
    private var counter: UInt64 = 0

    /// Watches held.
    var count: Int { watchers.count }

    /// Hunts watched.
    var huntCount: Int { watched.count }

    func isWatched(_ hunt: String) -> Bool { watched[hunt] != nil }

    /// The hunts watched.
    var hunts: Set<String> { Set(watched.keys) }

    /// The player watch `id` watches as (nil: its hunt's host, or no such watch).
    func player(of id: String) -> String? { watchers[id]?.player }

    /// Starts a watch of `record`'s hunt for `sink`, by its host (`player` nil) or the player of
    /// that name, at `now`; returns its id, `h` and a number.
    mutating func add(_ record: HuntRecord, player: String?, sink: any WatchSink, now: Timestamp) -> String {
        counter += 1
        let id = "h\(counter)"
        watchers[id] = Watcher(hunt: record.id, player: player, sink: sink)
        var hunt = watched[record.id] ?? WatchedHunt(record: record, announcedState: record.schedule.state(at: now), watchers: [])
        hunt.watchers.insert(id)
        watched[record.id] = hunt
        return id
    }

    /// Ends a watch; false when there is none with that id.
    mutating func remove(id: String) -> Bool {
        guard let watcher = watchers.removeValue(forKey: id) else { return false }
        if var hunt = watched[watcher.hunt] {
            hunt.watchers.remove(id)
            watched[watcher.hunt] = hunt.watchers.isEmpty ? nil : hunt
        }
        return true
    }

    /// Tells every watcher of `hunt` the event `event` makes for its watch id.
    func tell(_ hunt: String, into outbox: inout WatchOutbox, only which: (Watcher) -> Bool = { _ in true }, _ event: (String) -> WatchEvent) {
        guard let watchedHunt = watched[hunt] else { return }
        for id in watchedHunt.watchers.sorted() {
            guard let watcher = watchers[id], which(watcher) else { continue }
            outbox.add(event(id), for: watcher.sink)
        }
    }

    /// Ends the watches of `hunt` that `which` picks, each told why, last: nothing follows.
    mutating func close(_ hunt: String, reason: String, into outbox: inout WatchOutbox, _ which: (Watcher) -> Bool) {
        guard var watchedHunt = watched[hunt] else { return }
        for id in watchedHunt.watchers.sorted() {
            guard let watcher = watchers[id], which(watcher) else { continue }
            outbox.add(.closed(watch: id, reason: reason), for: watcher.sink)
            watchers[id] = nil
            watchedHunt.watchers.remove(id)
        }
        watched[hunt] = watchedHunt.watchers.isEmpty ? nil : watchedHunt
    }

    /// Ends watch `id` with a `closed` event saying `reason`; false when there is none.
    mutating func close(id: String, reason: String, into outbox: inout WatchOutbox) -> Bool {
        guard let watcher = watchers[id] else { return false }
        outbox.add(.closed(watch: id, reason: reason), for: watcher.sink)
        return remove(id: id)
    }

    /// The hunt was written (`record`, read again since): its watchers hear it as it is at `now`;
    /// when moderators removed it, every watch of it closes.
    mutating func huntChanged(_ hunt: String, to record: HuntRecord, now: Timestamp, into outbox: inout WatchOutbox) {
        guard var watchedHunt = watched[hunt] else { return }
        watchedHunt.record = record
        watchedHunt.announcedState = record.schedule.state(at: now)
        watched[hunt] = watchedHunt
        let view = record.hunt(at: now)
        tell(hunt, into: &outbox) { .hunt(watch: $0, hunt: view) }
        // Removed by moderators: it ended (above), and every watch of it closes.
        if record.removed { close(hunt, reason: "removed", into: &outbox) { _ in true } }
    }

    /// A player of `hunt` was renamed: their watches follow the new name.
    mutating func renamePlayer(in hunt: String, from old: String, to new: String) {
        guard let watchedHunt = watched[hunt] else { return }
        for id in watchedHunt.watchers where watchers[id]?.player == old { watchers[id]?.player = new }
    }

    /// Announces the watched hunts whose state at `now` differs from the one their watchers
    /// heard (a `STARTS` or `ENDS` passed).
    mutating func announceScheduledChanges(at now: Timestamp, into outbox: inout WatchOutbox) {
        for (hunt, var watchedHunt) in watched {
            let current = watchedHunt.record.schedule.state(at: now)
            guard current != watchedHunt.announcedState else { continue }
            watchedHunt.announcedState = current
            watched[hunt] = watchedHunt
            let view = watchedHunt.record.hunt(at: now)
            tell(hunt, into: &outbox) { .hunt(watch: $0, hunt: view) }
        }
    }
}
