import ReadWriteLock
import ScavengerCore
import ScavengerPinIndex
import ScavengerStore
import Synchronization

// Starting watches at the feed's place (`WATCH`, `WATCH … SNAPSHOT`, `WATCH … SINCE`).
extension Feed {
    /// Starts a watch of `area` at the feed's place, which the watch's events then follow: its
    /// events go to a sink held until the caller's reply has gone out (``StartedWatch/release``, from ScavengerCore).
    /// With `snapshot`, the visible pins inside come first as `pin` events carrying that place,
    /// then `ready`; registering and reading happen under the publishing lock, so every later
    /// change comes as a live event with a larger `seq`, and no earlier one does.
    public func startWatch(_ area: WatchArea, sink: any WatchSink, snapshot: Bool) -> StartedWatch {
        let held = HeldWatchSink(sink)
        let (id, place) = publishing.withLock { _ -> (String, Int64) in
            let place = appliedChange ?? 0
            let id = watches.add(area, sink: held)
            guard snapshot else { return (id, place) }
            let announcedThrough = expiries.withLock { $0.announcedThrough }
            let query = NearbyQuery(lat: area.lat, lon: area.lon, radius: area.radius, limit: Int.max, kind: area.kind)
            var events = index.read { index -> [WatchEvent] in
                guard let page = try? index.nearby(query, now: Timestamp(microseconds: announcedThrough)) else { return [] }
                let unannounced = ownPins.withLock { $0.unannounced }
                return page.pins.compactMap { found in
                    // An own new pin not yet announced comes as a live event.
                    unannounced.contains(found.pin.id) ? nil : .pin(watch: id, pin: found.pin, distance: found.distance, seq: place)
                }
            }
            events.append(.ready(watch: id, seq: place))
            watches.countPublished(events.count)
            held.deliver(events)
            return (id, place)
        }
        return StartedWatch(id: id, seq: place, resumed: false, release: held.release)
    }

    /// Starts a watch of `area` that first replays the changes inside it after change `since`
    /// (`WATCH … SINCE`): for each pin changed since, in the log order of its last change, `pin`
    /// when it is visible inside now, `gone` when it was inside and is no longer, with that
    /// change's `seq`; then live events. The log is read first; then, under the publishing lock,
    /// the watch is registered and the replay computed from the index up to the feed's place
    /// (read again when the feed has applied more than was read). Not resumed (a live watch
    /// only) when the log no longer reaches back to `since`; nil when `since` is past its end.
    public func resumeWatch(_ area: WatchArea, sink: any WatchSink, since: Int64) async throws(StoreError) -> StartedWatch? {
        // The log read first from this feed's place, so that a log rewritten under it (a
        // failover) is found, and the feed reloaded, before anything is replayed.
        try await catchUp()
        // Pins inside the circle lie within this band of latitudes (the log filters by it).
        let degrees = area.radius / Geodesy.earthRadius * 180 / .pi + 1e-6
        let band = max(-90, area.lat - degrees) ... min(90, area.lat + degrees)
        let log = try await database.pinChanges(after: since, latitudes: band)
        // A position of a history lost in a failover, on any daemon (`db/0033`): read everything again.
        if log.lost { return startWatch(area, sink: sink, snapshot: false) }
        guard since <= log.latest else { return nil }
        guard log.trimmedThrough <= since else {
            // A live watch from the log's end as read (the client reads everything again).
            if (appliedChange ?? 0) < log.latest { try await catchUp() }
            return startWatch(area, sink: sink, snapshot: false)
        }
        var changes = log.changes
        var through = log.latest
        for _ in 0 ..< 50 {
            // The feed may trail what was read (another daemon's writes, a client's seq from
            // another daemon): bring it up to there first.
            if (appliedChange ?? 0) < through { try await catchUp() }
            let held = HeldWatchSink(sink)
            let started = publishing.withLock { _ -> StartedWatch? in
                let place = appliedChange ?? 0
                guard place <= through else { return nil }
                let id = watches.add(area, sink: held)
                let events = replay(changes, after: since, through: place, into: id, area: area)
                if !events.isEmpty {
                    watches.countPublished(events.count)
                    held.deliver(events)
                }
                return StartedWatch(id: id, seq: place, resumed: true, release: held.release)
            }
            if let started { return started }
            let more = try await database.pinChanges(after: through, latitudes: band)
            guard more.trimmedThrough <= through else { return startWatch(area, sink: sink, snapshot: false) }
            changes += more.changes
            through = more.latest
        }
        throw .unavailable("the change log moves too fast to resume the watch; try again")
    }

    /// The replay of `changes` in (`since`, `place`] for watch `id` (under the publishing lock).
    private func replay(_ changes: [LoggedPinChange], after since: Int64, through place: Int64, into id: String, area: WatchArea) -> [WatchEvent] {
        // Each pin once, at its last change; where it was, from any entry that logged it; whether
        // it was shown at `since`, from its first change after it.
        var last: [String: (seq: Int64, change: LoggedPinChange, shownAtSince: Bool)] = [:]
        for change in changes where change.sequence > since && change.sequence <= place {
            let earlier = last[change.id]
            let known = change.lat != nil ? change : earlier?.change ?? change
            last[change.id] = (change.sequence, known, earlier?.shownAtSince ?? change.shownBefore)
        }
        let ordered = last.sorted { $0.value.seq < $1.value.seq }
        return index.read { index -> [WatchEvent] in
            expiries.withLock { queue -> [WatchEvent] in
                var events: [WatchEvent] = []
                for (pinID, entry) in ordered {
                    let indexed = index.pin(id: pinID)
                    if let pin = queue.visible(indexed), let distance = watches.distance(of: pin, from: area) {
                        events.append(.pin(watch: id, pin: pin, distance: distance, seq: entry.seq))
                        continue
                    }
                    // Not shown at `since` (hidden by moderation then, or not yet written): the
                    // watch had nothing of it to take away, as a watch that stayed would not.
                    guard entry.shownAtSince else { continue }
                    // Was it inside? By where the log says it was (or the index, for old entries
                    // that did not log it; unknown: say `gone`, which a client that never saw it skips).
                    let logged = entry.change
                    var wasInside = true
                    if let lat = logged.lat, let lon = logged.lon {
                        wasInside = watches.distance(lat: lat, lon: lon, kind: logged.kind, from: area) != nil
                    } else if let indexed {
                        wasInside = watches.distance(of: indexed.pin, from: area) != nil
                    }
                    if wasInside { events.append(.gone(watch: id, id: pinID, seq: entry.seq)) }
                }
                return events
            }
        }
    }
}
