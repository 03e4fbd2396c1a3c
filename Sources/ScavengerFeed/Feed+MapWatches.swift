import ScavengerCore
import ScavengerPinIndex
import Synchronization

/// The watches of map boxes (`WATCH MAP`): each keeps the cells it last reported, and at most
/// once a second of the feed's clock reports the cells that changed since: their count, or the
/// pin of a cell of one.
final class MapWatches: Sendable {
    struct Watch {
        var request: MapRequest
        var sink: any WatchSink
        /// Each cell as last reported (cells not here held no pin).
        var cells: [MapGrid.Tile: Seen]
        /// When its last event went (microseconds of the feed's clock).
        var lastSent: Int64
        /// The index's ``PinIndex/mapVersion`` its counts were taken at.
        var version: UInt64
    }

    /// What a watch last reported of a cell: its count, and its pin when it held one.
    struct Seen: Equatable {
        var count: Int
        var pinID: String?

        init(_ cell: MapCell<Pin>) {
            count = cell.count
            pinID = cell.pin?.id
        }
    }

    struct State {
        var watches: [String: Watch] = [:]
        var counter: UInt64 = 0
    }

    let state = Mutex(State())

    /// Whether `id` names a map watch.
    static func isMapWatch(_ id: String) -> Bool { id.hasPrefix("m") }
}

extension Feed {
    /// Starts a watch of a map box at a zoom (`WATCH MAP`): from now on, at most once a second
    /// of the feed's clock, an event with the cells whose count (or single pin) changed (a cell
    /// that emptied with count 0). Its events wait until the caller's reply has gone out
    /// (``StartedWatch/release``). The request must be valid (``MapRequest/problem`` nil).
    public func startMapWatch(_ request: MapRequest, sink: any WatchSink) -> StartedWatch {
        drainExpiries()
        let held = HeldWatchSink(sink)
        var whole = request
        whole.limit = MapGrid.maximumCells
        let (version, answer) = index.read { ($0.mapVersion, $0.map(whole)) }
        let cells = Dictionary(uniqueKeysWithValues: answer.cells.map { ($0.tile, MapWatches.Seen($0)) })
        let now = clock.now.microseconds
        let id = mapWatches.state.withLock { state -> String in
            state.counter += 1
            let id = "m\(state.counter)"
            state.watches[id] = MapWatches.Watch(request: whole, sink: held, cells: cells, lastSent: now, version: version)
            return id
        }
        return StartedWatch(id: id, seq: appliedChange ?? 0, resumed: false, release: held.release)
    }

    /// Ends a map watch; false when there is none with that id.
    @discardableResult
    public func removeMapWatch(id: String) -> Bool {
        mapWatches.state.withLock { $0.watches.removeValue(forKey: id) != nil }
    }

    /// Map watches held.
    public var mapWatchCount: Int { mapWatches.state.withLock { $0.watches.count } }

    /// Whether `id` names a map watch (`WATCH MAP`).
    public static func isMapWatch(_ id: String) -> Bool { MapWatches.isMapWatch(id) }

    /// Sends each map watch whose last event is at least a second old (by the feed's clock) the
    /// cells that changed since; ``FeedListener``'s announcer calls it every second.
    public func tickMapWatches() {
        drainExpiries()
        let now = clock.now.microseconds
        let due = mapWatches.state.withLock { state in
            state.watches.filter { now - $0.value.lastSent >= 1_000_000 }.map { ($0.key, $0.value.request, $0.value.version) }
        }
        for (id, request, version) in due {
            let recount = index.read { index -> (UInt64, MapAnswer<Pin>)? in
                index.mapVersion == version ? nil : (index.mapVersion, index.map(request))
            }
            guard let (newVersion, answer) = recount else { continue }
            mapWatches.state.withLock { state in
                guard var watch = state.watches[id] else { return }
                var changed: [MapCell<Pin>] = []
                var seen = Set<MapGrid.Tile>()
                for cell in answer.cells {
                    seen.insert(cell.tile)
                    if watch.cells[cell.tile] != MapWatches.Seen(cell) { changed.append(cell) }
                }
                for tile in watch.cells.keys where !seen.contains(tile) {
                    let box = tile.box
                    changed.append(MapCell(tile: tile, count: 0, lat: (box.south + box.north) / 2, lon: (box.west + box.east) / 2, pin: nil))
                }
                watch.cells = Dictionary(uniqueKeysWithValues: answer.cells.map { ($0.tile, MapWatches.Seen($0)) })
                watch.version = newVersion
                if !changed.isEmpty {
                    changed.sort(by: MapAnswer<Pin>.isListedBefore)
                    watch.lastSent = now
                    watch.sink.deliver([.cells(watch: id, cells: changed)])
                    watches.countPublished(1)
                }
                state.watches[id] = watch
            }
        }
    }
}
