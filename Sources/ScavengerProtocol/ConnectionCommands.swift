import ScavengerBoard
import ScavengerCore

extension JSON {
    /// `{"name": …, "role": …}`, or null. A guest's role reads `"user"` (the roles clients know),
    /// and `"guest": true` says what it is.
    public static func user(_ user: User?) -> JSON {
        guard let user else { return .null }
        return .object(userFields(user))
    }

    /// The user object as shown to that user: with `"email_verified"` when it is known.
    public static func ownUser(_ user: User, emailVerified: Bool?) -> JSON {
        var fields = userFields(user)
        if let emailVerified { fields.append(("email_verified", .bool(emailVerified))) }
        return .object(fields)
    }

    private static func userFields(_ user: User) -> [(String, JSON)] {
        guard user.isGuest else { return [("name", .string(user.name)), ("role", .string(user.role.rawValue))] }
        return [("name", .string(user.name)), ("role", .string(Role.user.rawValue)), ("guest", .bool(true))]
    }
}

/// PING, HELLO, HELP, QUIT.
enum ConnectionCommands {
    static func all(helpSource: @escaping @Sendable () -> CommandTable) -> [CommandSpec] {
        [
            CommandSpec(
                "PING", arity: 0 ... 0, syntax: "PING", summary: "Answers \"PONG\".",
                parse: { _ in () },
                answer: { _, _ in CommandOutcome(.ok("PONG")) }),
            CommandSpec(
                "HELLO", arity: 0 ... 0, syntax: "HELLO",
                summary: "The server's name and version, the protocol version and the logged-in user.",
                parse: { _ in () },
                answer: { _, context in
                    CommandOutcome(.ok([
                        "server": "scavengerd",
                        "version": .string(ServerVersion.daemon),
                        "protocol": .int(ServerVersion.protocolVersion),
                        "user": .user(context.session.user),
                    ]))
                }),
            CommandSpec(
                "HELP", arity: 0 ... 1, syntax: "HELP [command]",
                summary: "Lists the commands with their syntax, or describes one.",
                parse: { arguments in arguments.next()?.text },
                answer: { name, _ in
                    let table = helpSource()
                    guard let name else { return CommandOutcome(.ok(.array(table.commands.map(\.help)))) }
                    guard let spec = table.command(named: name) else {
                        throw CommandError(.unknownCommand, "unknown command \(Reply.echo(name)); HELP lists the commands")
                    }
                    return CommandOutcome(.ok(spec.help))
                }),
            CommandSpec(
                "QUIT", arity: 0 ... 0, syntax: "QUIT", summary: "Answers \"BYE\" and closes the connection.",
                parse: { _ in () },
                answer: { _, _ in CommandOutcome(.ok("BYE"), closesConnection: true) }),
        ]
    }
}

extension CommandTable {
    /// Every command the daemon speaks.
    public static let standard: CommandTable = CommandTable(
        ConnectionCommands.all(helpSource: { CommandTable.standard })
            + AccountCommands.all + PinCommands.all + FeedCommands.all + MapCommands.all + WatchCommands.all + ReplyCommands.all + ModerationCommands.all
            + HuntCommands.all + ScoreCommands.all)
}
