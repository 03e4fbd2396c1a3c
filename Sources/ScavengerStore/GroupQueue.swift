/// The writes waiting for a group committer (``GroupCommit``, ``CheckInGroups``) and its writers
/// in flight, kept under the committer's lock. A write that arrives while every writer's place is
/// taken waits; a writer that finishes a group takes the next at once, oldest first, or gives its
/// place back when none waits.
struct GroupQueue<Member> {
    private(set) var pending: [Member] = []
    private var writers = 0
    private let maximumBatch: Int
    private let maximumWriters: Int
    /// At most one member per key in a group (nil: no such rule): the rest wait, in order.
    private let key: (Member) -> Int?

    init(maximumBatch: Int, maximumWriters: Int, key: @escaping (Member) -> Int? = { _ in nil }) {
        precondition(maximumBatch >= 1 && maximumWriters >= 1)
        self.maximumBatch = maximumBatch
        self.maximumWriters = maximumWriters
        self.key = key
    }

    /// Queues `member`; returns a group for the caller to write when a writer's place was free.
    mutating func arrive(_ member: Member) -> [Member]? {
        pending.append(member)
        guard writers < maximumWriters else { return nil }
        writers += 1
        return takeGroup()
    }

    /// A writer finished its group: the next group for it, or nil when none waits (its place is
    /// given back).
    mutating func next() -> [Member]? {
        guard !pending.isEmpty else {
            writers -= 1
            return nil
        }
        return takeGroup()
    }

    /// The oldest waiting members, at most a batch and one per key.
    private mutating func takeGroup() -> [Member] {
        var taken: [Member] = []
        var keys = Set<Int>()
        var left: [Member] = []
        for member in pending {
            if taken.count < maximumBatch, key(member).map({ keys.insert($0).inserted }) ?? true {
                taken.append(member)
            } else {
                left.append(member)
            }
        }
        pending = left
        return taken
    }
}
