import Logging
import ScavengerStore

/// Start-up loads read from a standby (`serve --read-database-url`): the big reads (every live
/// pin, every user's totals) go to a standby of the current primary once it shows all the primary
/// had committed when the load took its place in the log; the place itself is read on the
/// primary, and the feed follows the primary's log from there, so the result is exactly a load
/// from the primary. "A standby of the current primary" is checked, not assumed: the same system
/// identifier, the same timeline, replayed past the load's position (``check(primary:standby:)``).
/// An old primary that was not fenced after a failover has the identifier but not the timeline,
/// and is passed over; so is a standby that cannot be reached or does not catch up within
/// ``maximumWait``: the load reads the primary.
public struct StandbyReads: Sendable {
    /// The store on the standby (its pool opens sessions on a standby when one answers).
    public let standby: Database
    /// How long a load waits for the standby to replay up to its place.
    public let maximumWait: Duration

    /// How often a load looks again at a standby that has not caught up.
    static let pollInterval = Duration.milliseconds(50)

    public init(standby: Database, maximumWait: Duration = .seconds(10)) {
        self.standby = standby
        self.maximumWait = maximumWait
    }

    /// What a load does with a standby, given where it and the primary stand.
    enum Verdict: Equatable {
        /// It is a standby of the primary, caught up: read it.
        case read
        /// It may still catch up: look again.
        case wait(String)
        /// It is not (or cannot be shown to be) a standby of the primary: read the primary.
        case passOver(String)
    }

    /// The decision, pure: another system identifier or timeline is never read. A standby still
    /// on an earlier timeline may yet follow the primary's switch (`recovery_target_timeline =
    /// 'latest'`), so it is waited for like one that has not replayed far enough; a primary on
    /// another timeline never will.
    static func check(primary: PrimaryPlace, standby: StandbyPlace) -> Verdict {
        guard standby.systemIdentifier == primary.systemIdentifier else {
            return .passOver("another database system (system identifier \(standby.systemIdentifier), the primary's \(primary.systemIdentifier))")
        }
        guard let timeline = standby.timeline else {
            return .passOver("its timeline is not known (no WAL receiver running, or the role lacks pg_read_all_stats)")
        }
        if timeline != primary.timeline {
            let difference = "on timeline \(timeline), the primary on \(primary.timeline)"
            if standby.inRecovery && timeline < primary.timeline { return .wait("it has not followed the primary's timeline yet (\(difference))") }
            return .passOver(standby.inRecovery ? "another history (\(difference))" : "it is a primary of another history (\(difference))")
        }
        return standby.replayed ? .read : .wait("it has not replayed up to the load's place")
    }

    /// Where a load whose place was just read on `primary` reads the rest: the standby once it
    /// shows it is a standby of the primary that has replayed its WAL up to now, else `primary`.
    /// `what` names the load in logs.
    func reader(after primary: Database, for what: String, logger: Logger) async -> Database {
        do {
            let place = try await primary.primaryPlace()
            // Bounded by the number of looks, not by reading a clock: one every poll interval
            // for the wait allowed.
            let looks = max(1, Int(maximumWait / Self.pollInterval) + 1)
            var reason = ""
            looking: for look in 1 ... looks {
                switch Self.check(primary: place, standby: try await standby.standbyPlace(against: place.lsn)) {
                case .read:
                    logger.info("loading from the standby", metadata: ["load": "\(what)", "primary_wal": "\(place.lsn)"])
                    return standby
                case .passOver(let why):
                    reason = why
                    break looking
                case .wait(let why):
                    reason = why
                    if look < looks { try await Task.sleep(for: Self.pollInterval) }
                }
            }
            logger.warning("the standby is not a caught-up standby of the primary; loading from the primary", metadata: [
                "load": "\(what)", "reason": "\(reason)", "primary_wal": "\(place.lsn)", "primary_timeline": "\(place.timeline)",
            ])
        } catch {
            logger.warning("the standby cannot be read; loading from the primary", metadata: ["load": "\(what)", "error": "\(error)"])
        }
        return primary
    }
}
