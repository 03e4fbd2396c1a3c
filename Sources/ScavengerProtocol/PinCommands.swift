import ScavengerBoard
import ScavengerCore

/// The fixed parts of the pin object and the feed page, as static strings: appending one copies
/// its bytes from the binary in one go, with no string to make or reference to count.
private enum PinFragments {
    static var pageOpen: StaticString { #"{"pins":["# }
    static var pageNext: StaticString { #"],"next":"# }
    static var id: StaticString { #"{"id":""# }
    static var lat: StaticString { #"","lat":"# }
    static var lon: StaticString { #","lon":"# }
    static var textKind: StaticString { #","kind":"text""# }
    static var photoKind: StaticString { #","kind":"photo""# }
    static var text: StaticString { #","text":"# }
    static var author: StaticString { #","author":"# }
    static var created: StaticString { #","created":""# }
    static var expires: StaticString { #"","expires":""# }
    static var region: StaticString { #"","region":"# }
    static var photo: StaticString { #","photo":"# }
    static var replies: StaticString { #","replies":"# }
    static var width: StaticString { #","width":"# }
    static var height: StaticString { #","height":"# }
    static var url: StaticString { #","url":"# }
    static var thumb: StaticString { #","thumb":"# }
    static var distance: StaticString { #","distance_m":"# }
    static var null: StaticString { "null" }
}

extension [UInt8] {
    /// Appends a fixed fragment's bytes in one copy from the binary.
    @inline(__always)
    fileprivate mutating func append(fragment: StaticString) {
        fragment.withUTF8Buffer { append(contentsOf: $0) }
    }
}

extension JSON {
    /// The contract's pin object, with `distance_m` for NEARBY. Written straight to bytes: feeds
    /// encode up to 200 of these per reply.
    public static func pin(_ pin: Pin, distance: Double? = nil) -> JSON {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + pin.text.utf8.count)
        appendPin(pin, distance: distance, to: &bytes)
        return .raw(bytes)
    }

    /// A feed page, `{"pins":[…],"next":…}`, encoded into one buffer.
    public static func page<Pins: Collection>(
        _ pins: Pins, next: String?, encode: (Pins.Element, inout [UInt8]) -> Void
    ) -> JSON {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32 + pins.count * 400)
        bytes.append(fragment: PinFragments.pageOpen)
        for (index, pin) in pins.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            encode(pin, &bytes)
        }
        bytes.append(fragment: PinFragments.pageNext)
        JSON.optional(next).encode(into: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return .raw(bytes)
    }

    /// Appends the pin object's encoding: the contract's fields, in its order.
    static func appendPin(_ pin: some PinFields, distance: Double?, to bytes: inout [UInt8]) {
        bytes.append(fragment: PinFragments.id)
        pin.appendID(to: &bytes)
        bytes.append(fragment: PinFragments.lat)
        appendNumber(pin.lat, to: &bytes)
        bytes.append(fragment: PinFragments.lon)
        appendNumber(pin.lon, to: &bytes)
        bytes.append(fragment: pin.kind == .photo ? PinFragments.photoKind : PinFragments.textKind)
        bytes.append(fragment: PinFragments.text)
        encodeString(utf8: pin.textUTF8, into: &bytes)
        bytes.append(fragment: PinFragments.author)
        encodeString(pin.author, into: &bytes)
        bytes.append(fragment: PinFragments.created)
        pin.created.appendRFC3339(to: &bytes)
        bytes.append(fragment: PinFragments.expires)
        pin.expires.appendRFC3339(to: &bytes)
        bytes.append(fragment: PinFragments.region)
        if let region = pin.region {
            encodeString(region, into: &bytes)
        } else {
            bytes.append(fragment: PinFragments.null)
        }
        bytes.append(fragment: PinFragments.photo)
        if let photo = pin.photo {
            JSON.object([("mime", .string(photo.mime)), ("bytes", .int(photo.bytes))]).encode(into: &bytes)
        } else {
            bytes.append(fragment: PinFragments.null)
        }
        bytes.append(fragment: PinFragments.replies)
        bytes.append(contentsOf: String(pin.replies).utf8)
        if let photo = pin.photo {
            // A photo pin's size as shown and where the HTTP port serves it (1.5).
            var id: [UInt8] = []
            pin.appendID(to: &id)
            let path = String(decoding: id, as: UTF8.self)
            bytes.append(fragment: PinFragments.width)
            bytes.append(contentsOf: String(photo.width).utf8)
            bytes.append(fragment: PinFragments.height)
            bytes.append(contentsOf: String(photo.height).utf8)
            bytes.append(fragment: PinFragments.url)
            encodeString(PhotoPaths.original(path), into: &bytes)
            bytes.append(fragment: PinFragments.thumb)
            encodeString(PhotoPaths.thumb(path), into: &bytes)
        }
        if let distance {
            bytes.append(fragment: PinFragments.distance)
            appendNumber(distance, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// The contract's reply object.
    public static func reply(_ reply: PinReply) -> JSON {
        [
            "id": .string(reply.id), "pin": .string(reply.pin), "text": .string(reply.text),
            "author": .string(reply.author), "created": .string(reply.created.rfc3339),
        ]
    }
}

/// POST, POSTPHOTO, GET, PHOTO, DELETE.
enum PinCommands {
    /// Posts a parsed pin and answers it.
    static func post(_ draft: PinDraft, context: CommandContext) async throws -> CommandOutcome {
        let render: @Sendable (Pin) -> JSON = { ["pin": .pin($0)] }
        return CommandOutcome(.ok(render(try await context.board.post(draft, by: context.session, request: context.keyed()))))
    }

    static let all: [CommandSpec] = [
        CommandSpec(
            "POST", arity: 3 ... 5, syntax: "POST lat lon text [TTL seconds]",
            summary: "Pins a text message (1–500 characters) where you stand; it fades after TTL seconds (default 48 h).",
            parse: { arguments in
                let (lat, lon) = try arguments.location()
                let text = try Arguments.text(arguments.required("text"))
                let options = try arguments.options(["TTL"])
                return PinDraft(lat: lat, lon: lon, text: text, ttlSeconds: try arguments.ttl(options["TTL"]))
            },
            execute: post),
        CommandSpec(
            "POSTPHOTO", arity: 3 ... 7, syntax: "POSTPHOTO lat lon base64 [CAPTION text] [TTL seconds]",
            summary: "Pins a photo (JPEG, PNG, GIF or WebP, base64, at most 5 MiB decoded) with an optional caption.",
            parse: { arguments in
                let (lat, lon) = try arguments.location()
                let data = try arguments.required("photo")
                let options = try arguments.options(["CAPTION", "TTL"])
                let caption = try options["CAPTION"].map { token throws(CommandError) in
                    try Arguments.text(token, "caption", allowEmpty: true)
                } ?? ""
                let ttl = try arguments.ttl(options["TTL"])
                return (PinDraft(lat: lat, lon: lon, text: caption, ttlSeconds: ttl), data.text)
            },
            execute: { request, context in
                // Every argument is decoded at parse but a photo: up to 5 MiB of base64 is decoded
                // here, off the connection's event loop, before anything else is checked.
                var draft = request.0
                draft.photo = try context.board.photo(fromBase64: request.1)
                return try await post(draft, context: context)
            }),
        CommandSpec(
            "GET", arity: 1 ... 1, syntax: "GET id", summary: "One live pin.",
            parse: { arguments in try arguments.required("id").text },
            execute: { id, context in
                CommandOutcome(.ok(["pin": .pin(try await context.board.pin(id: id))]))
            }),
        CommandSpec(
            "PHOTO", arity: 1 ... 1, syntax: "PHOTO id",
            summary: "A live photo pin's image, or a check-in's photo (for its player, the host and moderators), base64 on one line.",
            parse: { arguments in try arguments.required("id").text },
            execute: { id, context in
                let photo = try await context.board.photo(id: id, viewer: context.session)
                return CommandOutcome(.ok([
                    "id": .string(id), "mime": .string(photo.mime), "data": .string(Board.base64(photo.data)),
                ]))
            }),
        CommandSpec(
            "DELETE", arity: 1 ... 1, syntax: "DELETE id",
            summary: "Deletes a pin with its replies and photo; only its author or a moderator.",
            parse: { arguments in try arguments.required("id").text },
            execute: { id, context in
                try await context.board.delete(pinID: id, by: context.session, request: context.keyed())
                return CommandOutcome(.ok(true))
            }),
    ]
}

/// REPLY, REPLIES: the chat on a pin.
enum ReplyCommands {
    static let all: [CommandSpec] = [
        CommandSpec(
            "REPLY", arity: 2 ... 2, syntax: "REPLY pin-id text",
            summary: "Adds a message (1–500 characters) to the chat under a live pin.",
            parse: { arguments in
                (try arguments.required("pin id").text, try Arguments.text(arguments.required("text")))
            },
            execute: { request, context in
                let render: @Sendable (PinReply) -> JSON = { ["reply": .reply($0)] }
                let reply = try await context.board.reply(to: request.0, text: request.1, by: context.session, request: context.keyed())
                return CommandOutcome(.ok(render(reply)))
            }),
        CommandSpec(
            "REPLIES", arity: 1 ... 5, syntax: "REPLIES pin-id [LIMIT n] [CURSOR c]",
            summary: "A page of the chat under a pin, oldest first; pass `next` as CURSOR for the following page.",
            parse: { arguments -> (String, Int, ReplyCursor?) in
                let pinID = try arguments.required("pin id").text
                let options = try arguments.options(["LIMIT", "CURSOR"])
                let limit = try Arguments.pageLimit(options["LIMIT"])
                var cursor: ReplyCursor?
                if let token = options["CURSOR"] {
                    guard let parsed = ReplyCursor(encoded: token.text) else {
                        throw CommandError.badArgument("CURSOR is not a cursor this command returned")
                    }
                    guard parsed.belongs(toPin: pinID) else {
                        throw CommandError.badArgument("CURSOR belongs to another query (the replies of another pin)")
                    }
                    cursor = parsed
                }
                return (pinID, limit, cursor)
            },
            execute: { request, context in
                let (pinID, limit, cursor) = request
                let page = try await context.board.replies(to: pinID, after: cursor, limit: limit, viewer: context.session)
                return CommandOutcome(.ok([
                    "replies": .array(page.replies.map(JSON.reply)),
                    "next": .optional(page.next?.encoded),
                ]))
            }),
    ]
}
