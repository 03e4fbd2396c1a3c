import ScavengerBoard
import ScavengerCore

/// WATCH and UNWATCH, and the `EVENT` lines watches produce.
enum WatchCommands {
    static let watchSyntax = "WATCH lat lon radius_m [KIND text|photo] [SNAPSHOT] [SINCE seq] | WATCH HUNT id | WATCH MAP south west north east ZOOM z"

    /// What a WATCH asks for.
    enum Watched: Sendable, Equatable {
        case area(WatchArea, Start)
        case hunt(String)
        case map(MapRequest)
    }

    /// How an area watch begins: live only, with the pins inside first, or after a place in
    /// the change log.
    enum Start: Sendable, Equatable {
        case live
        case snapshot
        case since(Int64)
    }

    /// `OK {"watch": id, "seq": n, "resumed": bool}`, letting the watch's events go after it.
    static func outcome(_ started: StartedWatch) -> CommandOutcome {
        CommandOutcome(
            .ok(["watch": .string(started.id), "seq": .int(Int(started.seq)), "resumed": .bool(started.resumed)]),
            afterReply: started.release)
    }

    static let all: [CommandSpec] = [
        CommandSpec(
            "WATCH", arity: 2 ... 8, syntax: watchSyntax,
            summary: "Live EVENT lines for pins that appear in (`pin`) or leave (`gone`) the circle, each with its `seq` in the change log, or for a hunt you host or play, or (`WATCH MAP`) the cells of a map box whose counts changed, at most one event a second; returns the watch id and the log's `seq`. SNAPSHOT sends the pins inside first, then `ready`; SINCE seq first replays the changes inside since then (`resumed`: false when the log no longer reaches back).",
            parse: { arguments -> Watched in
                if let first = arguments.peek(), first.text.asciiUppercased == "HUNT" {
                    _ = arguments.next()
                    return .hunt(try arguments.required("hunt id").text)
                }
                if let first = arguments.peek(), first.text.asciiUppercased == "MAP" {
                    _ = arguments.next()
                    let request = try MapCommands.box(&arguments)
                    if let extra = arguments.next() {
                        throw CommandError.badArgument("unexpected \(Reply.echo(extra.text)) after WATCH MAP's zoom")
                    }
                    return .map(try MapCommands.checked(request))
                }
                guard arguments.remaining >= 3 else {
                    throw CommandError.badArgument("wrong number of arguments for WATCH; usage: \(watchSyntax)")
                }
                let (lat, lon, radius) = try arguments.circle()
                let options = try arguments.options(["KIND", "SINCE"], flags: ["SNAPSHOT"])
                let area = WatchArea(lat: lat, lon: lon, radius: radius, kind: try FeedCommands.kind(options["KIND"]))
                switch (options.has("SNAPSHOT"), options["SINCE"]) {
                case (true, nil):
                    return .area(area, .snapshot)
                case (false, nil):
                    return .area(area, .live)
                case (false, let since?):
                    return .area(area, .since(Int64(try Arguments.integer(since, "SINCE", in: 0 ... Int(Int64.max)))))
                case (true, _?):
                    throw CommandError.badArgument("SNAPSHOT and SINCE cannot be given together")
                }
            },
            step: { watched, context in
                switch watched {
                case .area(let area, .live):
                    return .done(outcome(try context.board.startWatch(area, snapshot: false, session: context.session)))
                case .area(let area, .snapshot):
                    // Pins this daemon acknowledged belong in the snapshot: wait for the feed to
                    // announce them first (only when some are still unannounced).
                    guard context.board.snapshotWaitsForOwnPins else {
                        return .done(outcome(try context.board.startWatch(area, snapshot: true, session: context.session)))
                    }
                    return .deferred {
                        outcome(try await context.board.startSnapshotWatch(area, session: context.session))
                    }
                case .area(let area, .since(let seq)):
                    return .deferred {
                        outcome(try await context.board.resumeWatch(area, since: seq, session: context.session))
                    }
                case .map(let request):
                    return .done(outcome(try context.board.startMapWatch(request, session: context.session)))
                case .hunt(let hunt):
                    return .deferred {
                        let id = try await context.board.watchHunt(id: hunt, session: context.session)
                        return CommandOutcome(.ok(["watch": .string(id)]))
                    }
                }
            }),
        CommandSpec(
            "UNWATCH", arity: 1 ... 1, syntax: "UNWATCH id", summary: "Ends a watch of this connection.",
            parse: { arguments -> String in try arguments.required("watch id").text },
            answer: { id, context in
                try context.board.unwatch(id, session: context.session)
                return CommandOutcome(.ok(.bool(true)))
            }),
    ]
}

/// The `EVENT` lines of the live feed.
public enum EventLine {
    /// Appends an event's line, ending in `\n`: `EVENT {"watch":…,"type":"pin","pin":…}` (the
    /// pin as NEARBY shows it, `distance_m` included), `EVENT {"watch":…,"type":"gone","id":…}`
    /// or `EVENT {"watch":…,"type":"overflow"}`.
    public static func encode(_ event: WatchEvent, into bytes: inout [UInt8]) {
        if case .overflow(let watch) = event {
            bytes.append(contentsOf: overflow(watch: watch))
            return
        }
        bytes.append(contentsOf: "EVENT {\"watch\":".utf8)
        JSON.encodeString(event.watch, into: &bytes)
        switch event {
        case .pin(_, let pin, let distance, let seq):
            bytes.append(contentsOf: ",\"type\":\"pin\",\"seq\":\(seq),\"pin\":".utf8)
            JSON.appendPin(pin, distance: distance, to: &bytes)
        case .gone(_, let id, let seq):
            bytes.append(contentsOf: ",\"type\":\"gone\",\"seq\":\(seq),\"id\":".utf8)
            JSON.encodeString(id, into: &bytes)
        case .ready(_, let seq):
            bytes.append(contentsOf: ",\"type\":\"ready\",\"seq\":\(seq)".utf8)
        case .overflow:
            break
        case .hunt(_, let hunt):
            bytes.append(contentsOf: ",\"type\":\"hunt\",\"hunt\":".utf8)
            JSON.hunt(HuntView(hunt: hunt, code: nil)).encode(into: &bytes)
        case .hint(_, let text, let at):
            bytes.append(contentsOf: ",\"type\":\"hint\",\"text\":".utf8)
            JSON.encodeString(text, into: &bytes)
            bytes.append(contentsOf: ",\"at\":".utf8)
            JSON.encodeString(at.rfc3339, into: &bytes)
        case .found(_, let player, let stop, let points):
            bytes.append(contentsOf: ",\"type\":\"found\",\"player\":".utf8)
            JSON.encodeString(player, into: &bytes)
            bytes.append(contentsOf: ",\"stop\":".utf8)
            JSON.encodeString(stop, into: &bytes)
            bytes.append(contentsOf: ",\"points\":\(points)".utf8)
        case .score(_, let entry):
            bytes.append(contentsOf: ",\"type\":\"score\",\"entry\":".utf8)
            JSON.entry(entry).encode(into: &bytes)
        case .reply(_, let reply):
            bytes.append(contentsOf: ",\"type\":\"reply\",\"reply\":".utf8)
            JSON.reply(reply).encode(into: &bytes)
        case .closed(_, let reason):
            bytes.append(contentsOf: ",\"type\":\"closed\",\"reason\":".utf8)
            JSON.encodeString(reason, into: &bytes)
        case .badge(_, let player, let badge):
            bytes.append(contentsOf: ",\"type\":\"badge\",\"player\":".utf8)
            JSON.encodeString(player, into: &bytes)
            bytes.append(contentsOf: ",\"badge\":".utf8)
            JSON.badge(badge).encode(into: &bytes)
        case .review(_, let checkIn, let status):
            bytes.append(contentsOf: ",\"type\":\"review\",\"checkin\":".utf8)
            JSON.encodeString(checkIn, into: &bytes)
            bytes.append(contentsOf: ",\"status\":".utf8)
            JSON.encodeString(status, into: &bytes)
        case .cells(_, let cells):
            bytes.append(contentsOf: ",\"type\":\"cells\",\"cells\":[".utf8)
            MapCommands.appendCells(cells, to: &bytes)
            bytes.append(UInt8(ascii: "]"))
        }
        bytes.append(contentsOf: "}\n".utf8)
    }

    /// `EVENT {"watch":…,"type":"overflow"}`: the watch ended because events were lost (its
    /// connection's unsent events passed their bound, or the feed reloaded).
    public static func overflow(watch: String) -> [UInt8] {
        var bytes = Array("EVENT {\"watch\":".utf8)
        JSON.encodeString(watch, into: &bytes)
        bytes.append(contentsOf: ",\"type\":\"overflow\"}\n".utf8)
        return bytes
    }
}
