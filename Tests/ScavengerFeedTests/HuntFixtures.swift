import ScavengerCore
@testable import ScavengerStore

extension HuntRecord {
    /// A public hunt by user 1 for the feed's tests, scheduled from `starts` for `durationSeconds`
    /// (nil: started and ended by hand).
    static func fixture(
        _ id: String = "h1", starts: Timestamp? = nil, durationSeconds: Int? = nil, removed: Bool = false
    ) -> HuntRecord {
        HuntRecord(
            id: id, name: "Hunt \(id)", description: "", hostID: 1, hostName: "host", code: JoinCode(typed: "ABCDEF")!,
            ordered: false, isPublic: true, schedule: HuntSchedule(starts: starts, durationSeconds: durationSeconds), stops: 3,
            players: 0, created: Timestamp(microseconds: 0), removed: removed)
    }
}

extension LoggedHuntChange {
    /// Entry `seq` of the hunts' log, of hunt `hunt` (stamped by its position).
    static func entry(_ seq: Int, _ change: HuntChange, hunt: String = "h1") -> LoggedHuntChange {
        LoggedHuntChange(seq: seq, hunt: hunt, change: change, stamp: Int64(seq) * 7)
    }
}

extension StandingChange {
    static func player(_ name: String, points: Int, found: Int = 1, user: Int?, at: Int64 = 1) -> StandingChange {
        StandingChange(player: name, points: points, found: found, at: Timestamp(microseconds: at), userID: user)
    }
}

extension Timestamp {
    /// `seconds` later.
    func plus(seconds: Int64) -> Timestamp {
        Timestamp(microseconds: microseconds + seconds * 1_000_000)
    }
}

extension WatchEvent {
    /// The text of a `hint` event; nil for any other.
    var hintText: String? {
        if case .hint(_, let text, _) = self { return text }
        return nil
    }

    /// The hunt's state in a `hunt` event; nil for any other.
    var huntState: HuntState? {
        if case .hunt(_, let hunt) = self { return hunt.state }
        return nil
    }
}
