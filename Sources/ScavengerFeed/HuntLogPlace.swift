import ScavengerStore

/// Where the hunts' feed is in their change log (`hunt_changes`): the last change applied with
/// its row's stamp (``LogPlace``: the stamp tells a rewritten log from the one applied), nil
/// until the rankings are loaded (``HuntFeed/load(now:)``), which sets it to the place they
/// reflect; and whether such a load is under way.
struct HuntLogPlace {
    private(set) var applied: LogPlace?
    /// Whether a load is under way (another task waits for it rather than loading too).
    private(set) var loading = false

    var isLoaded: Bool { applied != nil }

    /// The position of the last change applied; nil before the load.
    var seq: Int? { applied.map { Int($0.seq) } }

    /// Claims the load for the caller: false when the feed is loaded or being loaded.
    mutating func beginLoad() -> Bool {
        guard !loading, applied == nil else { return false }
        loading = true
        return true
    }

    mutating func endLoad() {
        loading = false
    }

    /// Takes `place`, the log's end read before a load, unless a load that finished first took
    /// a later one (this one's watchers would hear again changes they have heard); returns
    /// whether it took it.
    mutating func loaded(at place: LogPlace) -> Bool {
        if let applied, applied.seq > place.seq { return false }
        applied = place
        return true
    }

    /// Forgets the place (the log was rewritten under it): not loaded until the next load.
    mutating func forget() {
        applied = nil
    }

    /// Moves on to `change` when it comes after the place; false when it is applied already.
    mutating func advance(to change: LoggedHuntChange) -> Bool {
        guard change.seq > seq ?? 0 else { return false }
        applied = LogPlace(seq: Int64(change.seq), stamp: change.stamp)
        return true
    }

    /// Whether a hunt's board read from a snapshot of the log through `through` may be kept: the
    /// place is known and not past the snapshot, so no change after the snapshot has been
    /// applied without it.
    func keeps(snapshotThrough through: Int) -> Bool {
        guard let seq else { return false }
        return through >= seq
    }
}
