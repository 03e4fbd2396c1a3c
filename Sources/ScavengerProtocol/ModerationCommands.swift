import ScavengerBoard
import ScavengerCore

extension JSON {
    /// A queue item: the reported content's snapshot with its reports and state.
    public static func item(_ item: ModerationItem) -> JSON {
        let snapshot = item.content
        var content: [(String, JSON)] = [
            ("text", .string(snapshot.text)), ("author", .string(snapshot.author)),
            ("lat", .double(snapshot.lat)), ("lon", .double(snapshot.lon)), ("created", .string(snapshot.created.rfc3339)),
        ]
        if let kind = snapshot.pinKind { content.append(("kind", .string(kind.rawValue))) }
        if let expires = snapshot.expires { content.append(("expires", .string(expires.rfc3339))) }
        // A reply's pin, or the hunt of a stop or of a message in a hunt's chat.
        if let parent = snapshot.pin { content.append((Identifier.isHunt(parent) ? "hunt" : "pin", .string(parent))) }
        content.append(("photo", snapshot.photo.map { photo in
            ["mime": .string(photo.mime), "bytes": .int(photo.bytes), "kept": .bool(snapshot.photoKept)]
        } ?? .null))
        return .object([
            ("item", .string(item.item)), ("kind", .string(item.kind)), ("content", .object(content)),
            ("reports", .int(item.reports)),
            ("reasons", .object(item.reasons.map { ($0.reason, .int($0.count)) })),
            ("status", .string(item.status.rawValue)), ("claimed_by", .optional(item.claimedBy)),
            ("hidden", .bool(item.hidden)), ("first_reported", .string(item.firstReported.rfc3339)),
            ("last_reported", .string(item.lastReported.rfc3339)), ("resolution", .optional(item.resolution?.rawValue)),
        ])
    }
}

/// REPORT, MODQUEUE, CLAIM, RESOLVE, BAN, UNBAN, MODLOG.
enum ModerationCommands {
    static func banLength(_ token: Token) throws(CommandError) -> BanLength {
        if token.text.asciiLowercased == "permanent" { return .permanent }
        return .seconds(try Arguments.integer(token, "ban duration", in: 1 ... RequestChecks.maximumBanSeconds))
    }

    static func note(_ token: Token?) throws(CommandError) -> String? {
        try token.map { token throws(CommandError) in try Arguments.text(token, "NOTE") }
    }

    struct Report: Sendable {
        var item: String
        var reason: ReportReason
        var note: String?
    }

    struct Resolve: Sendable {
        var item: String
        var resolution: Resolution
        var ban: BanLength?
        var note: String?
    }

    static let all: [CommandSpec] = [
        CommandSpec(
            "REPORT", arity: 2 ... 4, syntax: "REPORT id reason [NOTE text]",
            summary: "Reports a pin or reply: spam, harassment, hate, sexual, violence, illegal or other.",
            parse: { arguments -> Report in
                let item = try arguments.required("id").text
                let reasonText = try arguments.required("reason").text
                guard let reason = ReportReason(rawValue: reasonText.asciiLowercased) else {
                    throw CommandError.badArgument(
                        "reason must be one of " + ReportReason.allCases.map(\.rawValue).joined(separator: " "))
                }
                let options = try arguments.options(["NOTE"])
                return Report(item: item, reason: reason, note: try note(options["NOTE"]))
            },
            execute: { request, context in
                let render: @Sendable (FiledReport) -> JSON = { receipt in
                    ["report": ["id": .string(receipt.id), "item": .string(receipt.item), "status": "open"]]
                }
                let receipt = try await context.board.report(
                    request.item, reason: request.reason, note: request.note, by: context.session, request: context.keyed())
                return CommandOutcome(.ok(render(receipt)))
            }),
        CommandSpec(
            "MODQUEUE", arity: 0 ... 4, syntax: "MODQUEUE [LIMIT n] [STATUS open|claimed|resolved|all]",
            summary: "Moderators: the reported items, most-reported first, then oldest (default: open ones).",
            parse: { arguments -> (Int, ItemStatus?) in
                let options = try arguments.options(["LIMIT", "STATUS"])
                var status: ItemStatus? = .open
                if let token = options["STATUS"] {
                    let text = token.text.asciiLowercased
                    if text == "all" {
                        status = nil
                    } else if let parsed = ItemStatus(rawValue: text) {
                        status = parsed
                    } else {
                        throw CommandError.badArgument("STATUS must be open, claimed, resolved or all")
                    }
                }
                return (try Arguments.pageLimit(options["LIMIT"]), status)
            },
            execute: { request, context in
                let items = try await context.board.moderationQueue(status: request.1, limit: request.0, by: context.session)
                return CommandOutcome(.ok(["items": .array(items.map(JSON.item))]))
            }),
        CommandSpec(
            "CLAIM", arity: 0 ... 1, syntax: "CLAIM [item]",
            summary: "Moderators: claims that item, or the next open one (null when none), for 15 minutes.",
            // `CLAIM REQUEST key` names no item.
            parse: { arguments in arguments.requestKeyFollows ? nil : arguments.next()?.text },
            execute: { item, context in
                let render: @Sendable (ModerationItem?) -> JSON = { claimed in claimed.map { ["item": JSON.item($0)] } ?? .null }
                let claimed = try await context.board.claim(item, by: context.session, request: context.keyed())
                return CommandOutcome(.ok(render(claimed)))
            }),
        CommandSpec(
            "RELEASE", arity: 1 ... 1, syntax: "RELEASE item",
            summary: "Moderators: hands back a claim you hold, so the item is open for others at once.",
            parse: { arguments in try arguments.required("item").text },
            execute: { item, context in
                let released = try await context.board.release(item, by: context.session)
                return CommandOutcome(.ok(["item": JSON.item(released)]))
            }),
        CommandSpec(
            "RESOLVE", arity: 2 ... 6, syntax: "RESOLVE item dismiss|remove|ban [DURATION seconds|permanent] [NOTE text]",
            summary: "The claim holder (or an admin) decides: dismiss shows it again, remove deletes it, ban also bans its author.",
            parse: { arguments -> Resolve in
                let item = try arguments.required("item").text
                let actionText = try arguments.required("action").text
                guard let resolution = Resolution(rawValue: actionText.asciiLowercased) else {
                    throw CommandError.badArgument("the action must be dismiss, remove or ban")
                }
                let options = try arguments.options(["DURATION", "NOTE"])
                if options["DURATION"] != nil, resolution != .ban {
                    throw CommandError.badArgument("DURATION goes with ban only")
                }
                return Resolve(
                    item: item, resolution: resolution, ban: try options["DURATION"].map(banLength),
                    note: try note(options["NOTE"]))
            },
            execute: { request, context in
                let render: @Sendable (ModerationItem) -> JSON = { ["item": .item($0)] }
                let item = try await context.board.resolve(
                    request.item, as: request.resolution, ban: request.ban, note: request.note, by: context.session,
                    request: context.keyed())
                return CommandOutcome(.ok(render(item)))
            }),
        CommandSpec(
            "BAN", arity: 2 ... 4, syntax: "BAN username seconds|permanent [NOTE text]",
            summary: "Moderators: bans a user; their writes get ERR BANNED until it ends.",
            parse: { arguments -> (String, BanLength, String?) in
                let name = try arguments.required("username").text
                let length = try banLength(arguments.required("duration"))
                let options = try arguments.options(["NOTE"])
                return (name, length, try note(options["NOTE"]))
            },
            execute: { request, context in
                try await context.board.setBan(of: request.0, to: request.1, note: request.2, by: context.session, request: context.keyed())
                return CommandOutcome(.ok(true))
            }),
        CommandSpec(
            "UNBAN", arity: 1 ... 1, syntax: "UNBAN username", summary: "Moderators: lifts a ban.",
            parse: { arguments in try arguments.required("username").text },
            execute: { name, context in
                try await context.board.setBan(of: name, to: nil, note: nil, by: context.session, request: context.keyed())
                return CommandOutcome(.ok(true))
            }),
        CommandSpec(
            "MODLOG", arity: 0 ... 4, syntax: "MODLOG [LIMIT n] [CURSOR c]",
            summary: "Moderators: every moderator action, newest first; follow `next` for more.",
            parse: { arguments -> (Int, Int?) in
                let options = try arguments.options(["LIMIT", "CURSOR"])
                var cursor: Int?
                if let token = options["CURSOR"] {
                    // What MODLOG returns: a log entry's id, plain digits.
                    guard token.text.utf8.allSatisfy({ (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) }),
                          let value = Int(token.text), value > 0
                    else {
                        throw CommandError.badArgument("CURSOR is not a cursor MODLOG returned")
                    }
                    cursor = value
                }
                return (try Arguments.pageLimit(options["LIMIT"]), cursor)
            },
            execute: { request, context in
                let page = try await context.board.moderationLog(limit: request.0, before: request.1, by: context.session)
                let entries: [JSON] = page.entries.map { entry in
                    [
                        "at": .string(entry.at.rfc3339), "moderator": .string(entry.moderator), "action": .string(entry.action),
                        "item": .optional(entry.item), "user": .optional(entry.user), "note": .optional(entry.note),
                    ]
                }
                return CommandOutcome(.ok(["entries": .array(entries), "next": .optional(page.next.map(String.init))]))
            }),
    ]
}
