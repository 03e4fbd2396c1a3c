import ScavengerCore
import Synchronization

/// A check-in waiting for its transaction: what the player sent, the board's rules for it, its
/// `REQUEST` key, stored with its outcome in the transaction that writes it, and for a photo the
/// user's photo rate, whose token the transaction takes when the check-in is written.
struct PendingCheckIn: Sendable {
    let new: NewCheckIn
    let judge: @Sendable (CheckInFacts) throws -> CheckInJudgement
    var request: KeyedWrite<CheckInOutcome?>? = nil
    var photoRate: RateLimit? = nil
    /// The board of the stop's hunt as the daemon holds it when the check-in is written (its
    /// players', or in a team hunt its teams'): the check-in's rank is its side's on it, with
    /// what the group wrote.
    var board: @Sendable () -> Leaderboard = { Leaderboard() }
}

/// Group commit for check-ins (as ``GroupCommit`` is for text pins): check-ins that arrive while
/// a group is being written wait for the next group and are written together, one transaction,
/// one commit, one flush. Each is still judged on its own facts, read under its own locks in
/// that transaction, and its caller hears back its own outcome, only after the commit.
///
/// A group holds at most one check-in per player (a player's second waits for the next group,
/// so it is judged after the first, as if alone); every lock of a group is taken at once in one
/// order (`checkin_lock_all`), so groups written side by side cannot deadlock each other. When a
/// group's transaction fails on something other than the database being away (a constraint a
/// judged check-in broke after all, say), its check-ins are written again one by one, so one
/// does not fail the others; when the database is away, each fails as a lone check-in would.
/// A keyed check-in (every client keys its writes) is grouped too: its key is stored with its
/// outcome in the group's transaction. So is a photo check-in: its photo's row is written in the
/// group's transaction and its photo token taken there (a player out of tokens is refused alone).
final class CheckInGroups: Sendable {
    typealias Waiter = CheckedContinuation<Result<CheckInOutcome?, StoreError>, Never>
    private typealias Group = [(checkIn: PendingCheckIn, waiter: Waiter)]

    private let database: GroupCommit.UnownedDatabase
    private let queue: Mutex<GroupQueue<(checkIn: PendingCheckIn, waiter: Waiter)>>
    private let written = Atomic<Int>(0)

    /// Check-ins waiting for a group (for tests).
    var waiting: Int { queue.withLock { $0.pending.count } }

    /// Groups written (committed or not) since this started (for tests).
    var groupsWritten: Int { written.load(ordering: .acquiring) }

    init(database: Database, maximumBatch: Int = 32, maximumWriters: Int) {
        self.database = GroupCommit.UnownedDatabase(value: database)
        // One check-in per player a group: a player's second is judged after their first.
        queue = Mutex(GroupQueue(maximumBatch: maximumBatch, maximumWriters: maximumWriters) { $0.checkIn.new.userID })
    }

    /// Writes the check-in in the next group it fits; returns its outcome once that group has
    /// committed (or failed).
    func write(_ checkIn: PendingCheckIn) async -> Result<CheckInOutcome?, StoreError> {
        await withCheckedContinuation { (waiter: Waiter) in
            let group = queue.withLock { $0.arrive((checkIn, waiter)) }
            if let group { start(group) }
        }
    }

    /// Writes `group` from a task of its own, takes the next group (or gives the writer's place
    /// back if none waits), answers the written group's callers and goes on with the next.
    private func start(_ group: Group) {
        Task { [self] in
            var group = group
            while true {
                let outcomes = await database.value.writeCheckInGroup(group.map(\.checkIn))
                database.value.checkInGroupSizes?.record(group.count)
                written.add(1, ordering: .releasing)
                let next = queue.withLock { $0.next() }
                for (index, member) in group.enumerated() { member.waiter.resume(returning: outcomes[index]) }
                guard let next else { return }
                group = next
            }
        }
    }
}

extension Database {
    /// Writes a group of check-ins (distinct players) in one transaction: each one's outcome. See
    /// ``CheckInGroups`` for what happens when the transaction fails.
    func writeCheckInGroup(_ group: [PendingCheckIn]) async -> [Result<CheckInOutcome?, StoreError>] {
        do {
            return try await huntTransaction { connection, log in
                let outcomes = try Self.writeCheckIns(group, connection, log)
                // Each key with its own outcome, after every write of the group (a key another
                // run holds fails the group, which is then written one by one: that one meets the
                // key alone and its caller answers from the stored reply).
                for (checkIn, outcome) in zip(group, outcomes) {
                    if case .success(let written) = outcome { try checkIn.request.record(written, on: connection) }
                }
                return outcomes
            }
        } catch {
            switch error {
            case .unavailable, .commitUnconfirmed:
                return group.map { _ in .failure(error) }
            default:
                guard group.count > 1 else { return [.failure(error)] }
                var outcomes: [Result<CheckInOutcome?, StoreError>] = []
                for checkIn in group {
                    do {
                        outcomes.append(.success(try await writeCheckInsAlone(checkIn)))
                    } catch {
                        outcomes.append(.failure(error))
                    }
                }
                return outcomes
            }
        }
    }
}
