import Synchronization

/// A check-in waiting for its transaction: what the player sent and the board's rules for it.
struct PendingCheckIn: Sendable {
    let new: NewCheckIn
    let judge: @Sendable (CheckInFacts) throws -> CheckInJudgement
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
final class CheckInGroups: Sendable {
    typealias Waiter = CheckedContinuation<Result<CheckInOutcome?, StoreError>, Never>
    private typealias Group = [(checkIn: PendingCheckIn, waiter: Waiter)]

    private let database: GroupCommit.UnownedDatabase
    private let maximumBatch: Int
    private let maximumWriters: Int
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var pending: Group = []
        var writers = 0
        var groupsWritten = 0
    }

    /// Check-ins waiting for a group (for tests).
    var waiting: Int { state.withLock { $0.pending.count } }

    /// Groups written (committed or not) since this started (for tests).
    var groupsWritten: Int { state.withLock { $0.groupsWritten } }

    init(database: Database, maximumBatch: Int = 32, maximumWriters: Int) {
        precondition(maximumBatch >= 1 && maximumWriters >= 1)
        self.database = GroupCommit.UnownedDatabase(value: database)
        self.maximumBatch = maximumBatch
        self.maximumWriters = maximumWriters
    }

    /// Writes the check-in in the next group it fits; returns its outcome once that group has
    /// committed (or failed).
    func write(_ checkIn: PendingCheckIn) async -> Result<CheckInOutcome?, StoreError> {
        await withCheckedContinuation { (waiter: Waiter) in
            let group = state.withLock { state -> Group? in
                state.pending.append((checkIn, waiter))
                guard state.writers < maximumWriters else { return nil }
                state.writers += 1
                return Self.takeGroup(&state.pending, maximumBatch: maximumBatch)
            }
            if let group { start(group) }
        }
    }

    /// The oldest waiting check-ins, at most a batch and one per player; the rest stay waiting
    /// in their order.
    private static func takeGroup(_ pending: inout Group, maximumBatch: Int) -> Group {
        var taken: Group = []
        var players = Set<Int>()
        var left: Group = []
        for member in pending {
            if taken.count < maximumBatch, players.insert(member.checkIn.new.userID).inserted {
                taken.append(member)
            } else {
                left.append(member)
            }
        }
        pending = left
        return taken
    }

    /// Writes `group` from a task of its own, takes the next group (or gives the writer's place
    /// back if none waits), answers the written group's callers and goes on with the next.
    private func start(_ group: Group) {
        Task { [self] in
            var group = group
            while true {
                let outcomes = await database.value.writeCheckInGroup(group.map(\.checkIn))
                database.value.checkInGroupSizes?.record(group.count)
                let next = state.withLock { state -> Group? in
                    state.groupsWritten += 1
                    guard !state.pending.isEmpty else {
                        state.writers -= 1
                        return nil
                    }
                    return Self.takeGroup(&state.pending, maximumBatch: maximumBatch)
                }
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
                try Self.writeCheckIns(group, photoRate: nil, connection, log)
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
