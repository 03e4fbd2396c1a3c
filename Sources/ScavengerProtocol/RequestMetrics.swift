import CoreMetrics

/// Counts and times requests as the command table answers them, the same for every front end
/// (the TCP port and the HTTP port's WebSocket) since both go through ``CommandTable/dispatch(line:context:)``.
///
/// Every counter and timer is made once, up front: one timer per command, and one counter per
/// command and reply code (`OK` or an `ERR` code). A request then costs a dictionary lookup by
/// command name, a clock read before and after, an array index by code, and the increments.
public final class RequestMetrics: Sendable {
    /// The label of requests that never reached a command: unknown names, lines that do not tokenize.
    public static let otherCommand = "OTHER"

    struct Entry: Sendable {
        /// Index 0 is `OK`; then one per ``ErrorCode``, in `allCases` order.
        let counters: [Counter]
        let duration: Timer
    }

    private let entries: [String: Entry]
    private let other: Entry
    private let rateLimited: Counter

    /// - Parameters:
    ///   - commands: the command names the table serves.
    ///   - factory: where the metrics go; by default the bootstrapped `MetricsSystem`.
    public init(commands: [String], factory: any MetricsFactory = MetricsSystem.factory) {
        func entry(_ command: String) -> Entry {
            let codes = ["OK"] + ErrorCode.allCases.map(\.rawValue)
            return Entry(
                counters: codes.map {
                    Counter(label: "scavenger_requests_total", dimensions: [("command", command), ("code", $0)], factory: factory)
                },
                duration: Timer(label: "scavenger_request_duration_seconds", dimensions: [("command", command)], factory: factory))
        }
        var entries: [String: Entry] = [:]
        for command in commands { entries[command] = entry(command) }
        self.entries = entries
        self.other = entry(Self.otherCommand)
        self.rateLimited = Counter(label: "scavenger_rate_limited_total", factory: factory)
    }

    /// Records what a dispatch produced once its reply is known: at once for a reply, when the
    /// work is done for deferred work. A blank line (no reply) is not a request.
    func measure(_ dispatch: Dispatch, command: String?, started: ContinuousClock.Instant) -> Dispatch {
        switch dispatch {
        case .reply(nil):
            return dispatch
        case .reply(let outcome?):
            record(outcome.reply, command: command, started: started)
            return dispatch
        case .deferred(let work):
            return .deferred {
                let outcome = await work()
                self.record(outcome.reply, command: command, started: started)
                return outcome
            }
        }
    }

    private func record(_ reply: Reply, command: String?, started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        let entry = command.flatMap { entries[$0] } ?? other
        let slot: Int
        switch reply {
        case .ok: slot = 0
        case .error(let code, _):
            slot = 1 + Self.index(of: code)
            if code == .rateLimited { rateLimited.increment() }
        }
        entry.counters[slot].increment()
        let (seconds, attoseconds) = elapsed.components
        entry.duration.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// The code's place in `ErrorCode.allCases`, without a search.
    private static func index(of code: ErrorCode) -> Int {
        switch code {
        case .badRequest: 0
        case .unknownCommand: 1
        case .badArgument: 2
        case .unauthorized: 3
        case .forbidden: 4
        case .banned: 5
        case .notFound: 6
        case .conflict: 7
        case .tooLarge: 8
        case .rateLimited: 9
        case .lineTooLong: 10
        case .unavailable: 11
        case .internal: 12
        case .tooFar: 13
        }
    }

    /// Counts a reply the front end produced itself, outside the command table (`LINE_TOO_LONG`,
    /// a request that is not UTF-8, a refused connection).
    public func recordFrontEndReply(_ reply: Reply) {
        record(reply, command: nil, started: ContinuousClock.now)
    }
}
