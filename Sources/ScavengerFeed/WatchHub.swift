import ScavengerCore
import Synchronization

/// A pin's visibility before and after one change (nil: not visible, for whatever reason), and
/// the change log's entry the change is (for an expiry, the feed's place when it was announced).
public struct PinTransition: Sendable {
    public var before: Pin?
    public var after: Pin?
    public var seq: Int64

    public init(before: Pin?, after: Pin?, seq: Int64) {
        self.before = before
        self.after = after
        self.seq = seq
    }
}

/// Every watch of the daemon, indexed by grid cell so a changed pin is matched without looking
/// at every watch: each watch registers in the cells ``Grid/cover(lat:lon:radius:maxCells:)``
/// gives for its circle, at the level it picks; a pin looks up its own cell at each level some
/// watch uses, then tests the exact distance.
public final class WatchHub: Sendable {
    struct Watch {
        var area: WatchArea
        var center: Geodesy.UnitVector
        var cells: [CellKey]
        var sink: any WatchSink
    }

    struct State {
        var watches: [String: Watch] = [:]
        /// Cell → ids of the watches whose cover includes it.
        var cells: [CellKey: [String]] = [:]
        /// Level → number of watches registered at it.
        var levels: [Int: Int] = [:]
        var counter: UInt64 = 0
    }

    private let state = Mutex(State())
    private let watchCount = Atomic<Int>(0)
    /// A watch registers in at most about this many cells (the finest level whose cover fits).
    public let maximumCells: Int

    public init(maximumCells: Int = Grid.defaultMaximumCells) {
        self.maximumCells = max(1, maximumCells)
    }

    /// Watches held.
    public var count: Int { watchCount.load(ordering: .relaxed) }

    /// Events handed to connections so far (for metrics).
    public var eventsPublished: Int { published.load(ordering: .relaxed) }
    private let published = Atomic<Int>(0)

    /// Counts events a feed handed to a watch itself (a snapshot or a replay).
    func countPublished(_ events: Int) {
        published.add(events, ordering: .relaxed)
    }

    /// Starts a watch; returns its id.
    public func add(_ area: WatchArea, sink: any WatchSink) -> String {
        let cover = Grid.cover(lat: area.lat, lon: area.lon, radius: area.radius, maxCells: maximumCells)
        let cells = cover.cells.isEmpty ? [Grid.cell(lat: area.lat, lon: area.lon, level: cover.level)] : cover.cells
        return state.withLock { state in
            state.counter += 1
            let id = "w\(state.counter)"
            state.watches[id] = Watch(area: area, center: Geodesy.UnitVector(lat: area.lat, lon: area.lon), cells: cells, sink: sink)
            for cell in cells { state.cells[cell, default: []].append(id) }
            state.levels[cover.level, default: 0] += 1
            watchCount.store(state.watches.count, ordering: .relaxed)
            return id
        }
    }

    /// Ends a watch; false when there is none with that id.
    @discardableResult
    public func remove(id: String) -> Bool {
        state.withLock { state in
            guard let watch = state.watches.removeValue(forKey: id) else { return false }
            for cell in watch.cells {
                state.cells[cell]?.removeAll { $0 == id }
                if state.cells[cell]?.isEmpty == true { state.cells[cell] = nil }
            }
            if let level = watch.cells.first?.level {
                state.levels[level, default: 1] -= 1
                if state.levels[level] == 0 { state.levels[level] = nil }
            }
            watchCount.store(state.watches.count, ordering: .relaxed)
            return true
        }
    }

    /// The watches whose circle (and kind) hold a pin, with its distance from each centre.
    func matches(_ pin: Pin, in state: State) -> [(id: String, distance: Double)] {
        let point = Geodesy.UnitVector(lat: pin.lat, lon: pin.lon)
        var found: [(id: String, distance: Double)] = []
        for level in state.levels.keys {
            guard let ids = state.cells[Grid.cell(lat: pin.lat, lon: pin.lon, level: level)] else { continue }
            for id in ids {
                guard let watch = state.watches[id] else { continue }
                if let kind = watch.area.kind, kind != pin.kind { continue }
                let distance = Geodesy.distance(watch.center, point)
                if distance <= watch.area.radius { found.append((id, distance)) }
            }
        }
        return found
    }

    /// The distance of a pin from one watch's centre when the watch's circle (and kind) hold it.
    public func distance(of pin: Pin, from area: WatchArea) -> Double? {
        distance(lat: pin.lat, lon: pin.lon, kind: pin.kind, from: area)
    }

    /// ``distance(of:from:)`` for a pin known by its place and kind (nil kind: any).
    public func distance(lat: Double, lon: Double, kind: PinKind?, from area: WatchArea) -> Double? {
        if let wanted = area.kind, let kind, wanted != kind { return nil }
        let distance = Geodesy.distance(Geodesy.UnitVector(lat: area.lat, lon: area.lon), Geodesy.UnitVector(lat: lat, lon: lon))
        return distance <= area.radius ? distance : nil
    }

    /// The ids of the watches that hold a pin (for tests and monitoring).
    public func watches(holding pin: Pin) -> [String] {
        state.withLock { matches(pin, in: $0).map(\.id).sorted() }
    }

    /// Tells every watch its events were lost (`overflow`); each sink ends its watches. For a
    /// feed that reloads from scratch, whose changes in between are not known one by one.
    public func overflowAll() {
        state.withLock { state in
            var outbox = WatchOutbox()
            for (id, watch) in state.watches.sorted(by: { $0.key < $1.key }) {
                outbox.add(.overflow(watch: id), for: watch.sink)
            }
            deliver(outbox)
        }
    }

    /// Turns visibility changes into events and hands each sink its own, in order: `gone` for a
    /// watch that saw the pin before and not after, `pin` for one that sees it after and not before.
    public func publish(_ transitions: [PinTransition]) {
        guard !transitions.isEmpty, count > 0 else { return }
        state.withLock { state in
            var outbox = WatchOutbox()
            func add(_ event: WatchEvent, for id: String) {
                guard let sink = state.watches[id]?.sink else { return }
                outbox.add(event, for: sink)
            }
            for transition in transitions {
                let before = transition.before.map { matches($0, in: state) } ?? []
                let after = transition.after.map { matches($0, in: state) } ?? []
                for (id, _) in before where !after.contains(where: { $0.id == id }) {
                    add(.gone(watch: id, id: transition.before!.id, seq: transition.seq), for: id)
                }
                if let pin = transition.after {
                    for (id, distance) in after where !before.contains(where: { $0.id == id }) {
                        add(.pin(watch: id, pin: pin, distance: distance, seq: transition.seq), for: id)
                    }
                }
            }
            deliver(outbox)
        }
    }

    /// Hands each sink its events, counting them (under the lock: see ``WatchSink``).
    private func deliver(_ outbox: WatchOutbox) {
        published.add(outbox.eventCount, ordering: .relaxed)
        outbox.deliver()
    }
}

/// A watch's sink while its `WATCH` reply has not gone out: events (a replay, then live ones)
/// wait here, in order, until ``release()`` hands them and every later one to the connection's
/// sink, so the client reads the reply first and the replay before anything live.
public final class HeldWatchSink: WatchSink {
    private struct State {
        var held: [WatchEvent] = []
        var released = false
    }

    private let inner: any WatchSink
    private let state = Mutex(State())

    public init(_ inner: any WatchSink) {
        self.inner = inner
    }

    public func deliver(_ events: [WatchEvent]) {
        state.withLock { state in
            // Handed on under the lock, so a release in between cannot reorder them.
            if state.released {
                inner.deliver(events)
            } else {
                state.held += events
            }
        }
    }

    /// Hands what waits to the connection, and every later event at once.
    public func release() {
        state.withLock { state in
            guard !state.released else { return }
            state.released = true
            if !state.held.isEmpty { inner.deliver(state.held) }
            state.held = []
        }
    }
}
