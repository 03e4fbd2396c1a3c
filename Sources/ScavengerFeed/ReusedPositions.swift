/// Where a rewritten change log parted from the one a feed applied, and which positions a
/// `WATCH … SINCE` may therefore name from a history the database no longer has.
///
/// After an asynchronous standby is promoted, the log's last entries are gone and their
/// positions are given out again to other changes. A client's `SINCE s` is only a number: if `s`
/// is past the point where the histories part, it may come from the lost one, and replaying
/// "after `s`" in the new one would skip changes and keep lost pins. Such a watch is answered
/// `resumed: false` (the client reads everything again); positions at or before the parting
/// point are the same in both histories and resume as usual.
struct ReusedPositions: Sendable {
    /// The stamps of the changes applied last, oldest first, at most ``capacity``: to find, once
    /// the log is found rewritten, the last position whose row is still the one applied.
    private(set) var recent: [LogStamp] = []
    /// Ranges (`after`, `through`] of positions that may have been given out twice.
    private(set) var reused: [(after: Int64, through: Int64)] = []
    let capacity: Int

    /// A change applied: its position and its row's random stamp.
    struct LogStamp: Sendable, Equatable {
        var seq: Int64
        var stamp: Int64
    }

    init(capacity: Int = 4096) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// Notes changes applied in log order.
    mutating func applied(_ stamps: some Sequence<LogStamp>) {
        recent.append(contentsOf: stamps)
        if recent.count > capacity * 2 { recent.removeFirst(recent.count - capacity) }
    }

    /// The last position of ``recent`` whose row the log still holds with its stamp, every one
    /// before it too (`stored`: the stamps the log holds now at those positions). 0 when even the
    /// oldest remembered one differs, or none is remembered: then nothing is known to be shared.
    func partingPoint(stored: [Int64: Int64]) -> Int64 {
        var parting: Int64 = 0
        for entry in recent.suffix(capacity) {
            guard stored[entry.seq] == entry.stamp else { break }
            parting = entry.seq
        }
        return parting
    }

    /// The log was found rewritten: positions after `parting` through `through` (the last
    /// applied from the old history, or the new log's end if further) may name either history.
    /// What was remembered belonged to the old one.
    mutating func rewritten(parting: Int64, through: Int64) {
        if through > parting { reused.append((parting, through)) }
        recent.removeAll()
    }

    /// Whether `SINCE seq` may come from a history the log no longer has.
    func mayBeReused(_ seq: Int64) -> Bool {
        reused.contains { seq > $0.after && seq <= $0.through }
    }
}
