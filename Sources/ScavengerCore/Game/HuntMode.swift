/// How a hunt is played, as the host made it: who competes, in what order, against what clock.
/// The game's rules branch on these cases, not on optional fields.
public struct HuntMode: Sendable, Equatable {
    /// Who holds a standing in the hunt.
    public enum Sides: Sendable, Equatable {
        /// Each player for themselves.
        case players
        /// Teams of at most `largest` players; a stop counts once per team.
        case teams(largest: Int)
    }

    /// Whether stops must be found in their order.
    public enum Order: Sendable, Equatable {
        case free
        case ordered
    }

    /// The clock a side plays against.
    public enum Clock: Sendable, Equatable {
        /// Only the hunt's schedule.
        case open
        /// A time trial: `seconds` from the side's first live check-in.
        case trial(seconds: Int)
    }

    public var sides: Sides
    public var order: Order
    public var clock: Clock

    public init(sides: Sides, order: Order, clock: Clock) {
        self.sides = sides
        self.order = order
        self.clock = clock
    }

    /// The mode of a hunt as stored: a team size makes a team hunt, trial seconds a time trial.
    public init(teamSize: Int?, ordered: Bool, trialSeconds: Int?) {
        sides = teamSize.map { .teams(largest: $0) } ?? .players
        order = ordered ? .ordered : .free
        clock = trialSeconds.map { .trial(seconds: $0) } ?? .open
    }

    /// Whether teams play it.
    public var isTeams: Bool {
        if case .teams = sides { return true }
        return false
    }

    /// A time trial's seconds; nil when there is no trial.
    public var trialSeconds: Int? {
        if case .trial(let seconds) = clock { return seconds }
        return nil
    }

    /// Whether leaving while the hunt runs is final (1.5: in a time trial or a team hunt, a
    /// player who leaves cannot come back before it ends, so leaving cannot restart a clock or
    /// rotate members through a team).
    public var leavingIsFinalWhileRunning: Bool { isTeams || trialSeconds != nil }
}
