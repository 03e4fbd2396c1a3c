import Logging
import ScavengerStore

/// Start-up loads read from a standby (`serve --read-database-url`): the big reads (every live
/// pin, every user's totals) go to a standby once it shows all the primary had committed when the
/// load took its place in the log; the place itself is read on the primary, and the feed follows
/// the primary's log from there, so the result is exactly a load from the primary. A standby that
/// cannot be reached, or does not catch up within ``maximumWait``, is passed over: the load reads
/// the primary.
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

    /// Where a load whose place was just read on `primary` reads the rest: the standby once it
    /// has replayed the primary's WAL up to now, else `primary`. `what` names the load in logs.
    func reader(after primary: Database, for what: String, logger: Logger) async -> Database {
        do {
            let position = try await primary.walPosition()
            // Bounded by the number of looks, not by reading a clock: one every poll interval
            // for the wait allowed.
            let looks = max(1, Int(maximumWait / Self.pollInterval) + 1)
            for look in 1 ... looks {
                if try await standby.hasReplayed(position) {
                    logger.info("loading from the standby", metadata: ["load": "\(what)", "primary_wal": "\(position)"])
                    return standby
                }
                if look < looks { try await Task.sleep(for: Self.pollInterval) }
            }
            logger.warning("the standby has not replayed up to the load's place; loading from the primary", metadata: [
                "load": "\(what)", "primary_wal": "\(position)",
            ])
        } catch {
            logger.warning("the standby cannot be read; loading from the primary", metadata: ["load": "\(what)", "error": "\(error)"])
        }
        return primary
    }
}
