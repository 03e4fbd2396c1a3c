import Logging
import ScavengerBoard

/// What a command's handler can reach: the connection's session, and the board every use case
/// goes through.
public struct CommandContext: Sendable {
    public var session: Session
    public var board: Board
    public var logger: Logger
    /// A write's `REQUEST` key and the request's canonical form, when the request gave one.
    public var requestKey: (key: String, request: String)?

    public init(session: Session, board: Board, logger: Logger) {
        self.session = session
        self.board = board
        self.logger = logger
    }
}

extension CommandContext {
    /// This request's `REQUEST` key for the board (nil when the request gave none): the board
    /// stores the write's result with it, and answers a retry of the same request with that
    /// result, which the command then writes as it wrote the first answer.
    public func keyed<Result>() -> RequestKey<Result>? {
        requestKey.map { RequestKey(key: $0.key, request: $0.request) }
    }
}

/// What a command produced: its reply, whether the connection ends after it, and what the
/// front end runs once the reply has gone out (a new watch lets its events go: they must follow
/// the reply that names it).
public struct CommandOutcome: Sendable, Equatable {
    public var reply: Reply
    public var closesConnection: Bool
    public var afterReply: (@Sendable () -> Void)?

    public init(_ reply: Reply, closesConnection: Bool = false, afterReply: (@Sendable () -> Void)? = nil) {
        self.reply = reply
        self.closesConnection = closesConnection
        self.afterReply = afterReply
    }

    /// Outcomes are equal by what the client reads.
    public static func == (lhs: CommandOutcome, rhs: CommandOutcome) -> Bool {
        lhs.reply == rhs.reply && lhs.closesConnection == rhs.closesConnection
    }
}

extension CommandOutcome {
    /// The answer to a request line that is not valid UTF-8, on every front end.
    public static let invalidUTF8 = CommandOutcome(.error(.badRequest, "request line is not valid UTF-8"))
}

/// What dispatching a line produced: a reply at once (in-memory commands, and every error found
/// while parsing), or work that must wait on the database or a thread pool.
public enum Dispatch: Sendable {
    /// The reply, or nil for a blank line.
    case reply(CommandOutcome?)
    /// Work to await; it never throws, every failure is already an `ERR` reply.
    case deferred(@Sendable () async -> CommandOutcome)
}

/// One row of the command table: name, arity, syntax and summary (for `HELP` and the README),
/// a pure parser from arguments to a typed request, and the handler that executes it.
public struct CommandSpec: Sendable {
    /// Upper-case command name.
    public let name: String
    /// How many arguments (tokens after the name) it takes.
    public let arity: ClosedRange<Int>
    /// e.g. `NEARBY lat lon radius_m [LIMIT n]`.
    public let syntax: String
    public let summary: String
    /// Whether the command writes and so takes `REQUEST key` (exactly-once retries).
    public let takesRequestKey: Bool
    /// What a client may do with this command when a connection drops before its reply, shown
    /// in `HELP` (as Redis's `COMMAND INFO` shows its flags): the clients' lists of writes and
    /// reads are checked against it.
    public let flags: [Flag]
    let prepare: @Sendable (inout Arguments, CommandContext) throws -> Step

    /// A command's flags.
    public enum Flag: String, Sendable, CaseIterable {
        /// It writes: it takes `REQUEST key`, and is sent again under the same key.
        case write
        /// It changes nothing (neither data nor the connection's state): sent again freely.
        case readonly
    }

    /// The writes that take `REQUEST key`, as the contract lists them.
    public static let keyedWrites: Set<String> = [
        "POST", "POSTPHOTO", "DELETE", "REPLY", "REPORT", "CREATEHUNT", "ADDSTOP", "REMOVESTOP", "JOIN", "LEAVE", "CHECKIN",
        "APPROVE", "REJECT", "HINT", "STARTHUNT", "EXTEND", "ENDHUNT", "CLAIM", "RESOLVE", "BAN", "UNBAN",
    ]

    /// The commands that change nothing, neither data nor the connection's state. The rest
    /// (neither these nor writes) change the connection's state: `AUTH`, `LOGIN`, `WATCH`, ….
    public static let readOnlyCommands: Set<String> = [
        "PING", "HELLO", "HELP", "WHOAMI", "GET", "PHOTO", "NEARBY", "MAP", "REGIONS", "REGION", "REPLIES", "MODQUEUE", "MODLOG",
        "HUNT", "HUNTS", "REVIEW", "LEADERBOARD", "RANKING", "PROFILE", "BADGES",
    ]

    /// A parsed request: answered already, or work to await.
    enum Step {
        case done(CommandOutcome)
        case deferred(@Sendable () async throws -> CommandOutcome)
    }

    /// A command whose handler awaits (the database, password hashing).
    /// - Parameters:
    ///   - parse: turns the arguments into a request; pure, so it can be tested alone.
    ///   - execute: carries the request out.
    public init<Request: Sendable>(
        _ name: String,
        arity: ClosedRange<Int>,
        syntax: String,
        summary: String,
        parse: @escaping @Sendable (inout Arguments) throws -> Request,
        execute: @escaping @Sendable (Request, CommandContext) async throws -> CommandOutcome
    ) {
        self.init(name, arity: arity, syntax: syntax, summary: summary, parse: parse) { request, context in
            .deferred { try await execute(request, context) }
        }
    }

    /// A command answered from memory on the connection's event loop, with no hand-off.
    /// - Parameters:
    ///   - parse: turns the arguments into a request; pure, so it can be tested alone.
    ///   - answer: carries the request out without blocking.
    public init<Request: Sendable>(
        _ name: String,
        arity: ClosedRange<Int>,
        syntax: String,
        summary: String,
        parse: @escaping @Sendable (inout Arguments) throws -> Request,
        answer: @escaping @Sendable (Request, CommandContext) throws -> CommandOutcome
    ) {
        self.init(name, arity: arity, syntax: syntax, summary: summary, parse: parse) { request, context in
            .done(try answer(request, context))
        }
    }

    /// Parses all the arguments, then turns the request into a step: answered at once or
    /// deferred, request by request (WATCH: an area at once, a hunt after the database).
    init<Request: Sendable>(
        _ name: String, arity: ClosedRange<Int>, syntax: String, summary: String,
        parse: @escaping @Sendable (inout Arguments) throws -> Request,
        step: @escaping @Sendable (Request, CommandContext) throws -> Step
    ) {
        self.name = name.asciiUppercased
        let keyed = Self.keyedWrites.contains(self.name)
        takesRequestKey = keyed
        flags = keyed ? [.write] : Self.readOnlyCommands.contains(self.name) ? [.readonly] : []
        // `REQUEST key` adds two tokens to a write.
        self.arity = keyed ? arity.lowerBound ... arity.upperBound + 2 : arity
        self.syntax = keyed ? syntax + " [REQUEST key]" : syntax
        self.summary = summary
        self.prepare = { arguments, context in
            let request = try parse(&arguments)
            try arguments.finish()
            var context = context
            if let key = arguments.requestKey { context.requestKey = (key, arguments.canonicalRequest) }
            return try step(request, context)
        }
    }

    /// The `HELP` entry.
    public var help: JSON {
        [
            "command": .string(name), "syntax": .string(syntax), "summary": .string(summary),
            "flags": .array(flags.map { .string($0.rawValue) }),
        ]
    }
}

/// The command table: dispatch, arity errors, `HELP` and the README's reference all come from it.
public struct CommandTable: Sendable {
    /// Rows in the order `HELP` lists them.
    public let commands: [CommandSpec]
    private let byName: [String: CommandSpec]

    /// The most tokens any request line can use: a name and the largest arity. A line is split
    /// no further than one token past it.
    private let maximumTokens: Int

    /// Where requests are counted and timed; nil (the default) measures nothing.
    public var metrics: RequestMetrics?

    public init(_ commands: [CommandSpec]) {
        self.commands = commands
        self.byName = Dictionary(commands.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.maximumTokens = 1 + (commands.map(\.arity.upperBound).max() ?? 0)
    }

    /// The row for a name, case-insensitively.
    public func command(named name: String) -> CommandSpec? {
        byName[name.asciiUppercased]
    }

    /// Executes one request line (without its line ending). A blank line gets no reply (nil).
    /// Never throws: every failure becomes an `ERR` reply.
    /// Whatever follows the reply (a watch's events) is let go as it returns.
    public func execute(line: String, context: CommandContext) async -> CommandOutcome? {
        let outcome: CommandOutcome?
        switch dispatch(line: line, context: context) {
        case .reply(let answer): outcome = answer
        case .deferred(let work): outcome = await work()
        }
        outcome?.afterReply?()
        return outcome
    }

    /// Tokenizes, parses and, for in-memory commands, answers one line without suspending;
    /// commands that need the database come back as deferred work.
    public func dispatch(line: String, context: CommandContext) -> Dispatch {
        guard let metrics else { return route(line: line, context: context).dispatch }
        let started = ContinuousClock.now
        let (dispatch, command) = route(line: line, context: context)
        return metrics.measure(dispatch, command: command, started: started)
    }

    /// ``dispatch(line:context:)``'s work, and the command it reached (nil when none).
    private func route(line: String, context: CommandContext) -> (dispatch: Dispatch, command: String?) {
        let tokens: [Token]
        do {
            tokens = try Tokenizer.tokenize(line, maximumTokens: maximumTokens + 1)
        } catch {
            return (.reply(CommandOutcome(Reply(error))), nil)
        }
        guard let first = tokens.first else { return (.reply(nil), nil) }
        guard let spec = command(named: first.text) else {
            return (.reply(CommandOutcome(.error(.unknownCommand, "unknown command \(Reply.echo(first.text)); HELP lists the commands"))), nil)
        }
        let argumentCount = tokens.count - 1
        guard spec.arity.contains(argumentCount) else {
            return (.reply(CommandOutcome(.error(.badArgument, "wrong number of arguments for \(spec.name); usage: \(spec.syntax)"))), spec.name)
        }
        var arguments = Arguments(
            command: spec.name, tokens: tokens.dropFirst(), checks: context.board.checks, acceptsRequestKey: spec.takesRequestKey)
        do {
            switch try spec.prepare(&arguments, context) {
            case .done(let outcome):
                return (.reply(outcome), spec.name)
            case .deferred(let work):
                let name = spec.name
                return (.deferred {
                    do {
                        return try await work()
                    } catch {
                        return Self.outcome(for: error, command: name, logger: context.logger)
                    }
                }, name)
            }
        } catch {
            return (.reply(Self.outcome(for: error, command: spec.name, logger: context.logger)), spec.name)
        }
    }

    /// The `ERR` reply for a handler's failure. The board has already logged what was not the
    /// caller's fault; anything else reaching here is a bug, logged once here.
    static func outcome(for error: any Error, command: String, logger: Logger) -> CommandOutcome {
        switch error {
        case let error as CommandError:
            return CommandOutcome(Reply(error))
        case let error as BoardError:
            return CommandOutcome(Reply(CommandError(error)))
        default:
            logger.error("command failed", metadata: ["command": "\(command)", "error": "\(error)"])
            return CommandOutcome(.error(.internal, "internal error"))
        }
    }

    /// This table, counting and timing its requests in `metrics`.
    public func measured(by metrics: RequestMetrics) -> CommandTable {
        var table = self
        table.metrics = metrics
        return table
    }

    /// The command reference as a Markdown table, as the README shows it.
    public var markdownReference: String {
        var lines = ["| Command | Summary |", "| --- | --- |"]
        for spec in commands {
            let syntax = spec.syntax.split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|")
            let summary = spec.summary.split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|")
            lines.append("| `\(syntax)` | \(summary) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
