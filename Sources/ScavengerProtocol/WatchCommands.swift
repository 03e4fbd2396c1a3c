import ScavengerBoard
import ScavengerCore

/// WATCH and UNWATCH, and the `EVENT` lines watches produce.
enum WatchCommands {
    static let all: [CommandSpec] = [
        CommandSpec(
            "WATCH", arity: 3 ... 5, syntax: "WATCH lat lon radius_m [KIND text|photo]",
            summary: "Live EVENT lines for pins that appear in (`pin`) or leave (`gone`) the circle; returns the watch id.",
            parse: { arguments -> WatchArea in
                let (lat, lon, radius) = try arguments.circle()
                let options = try arguments.options(["KIND"])
                return WatchArea(lat: lat, lon: lon, radius: radius, kind: try FeedCommands.kind(options["KIND"]))
            },
            answer: { area, context in
                let id = try context.board.watch(area, session: context.session)
                return CommandOutcome(.ok(["watch": .string(id)]))
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
        case .pin(_, let pin, let distance):
            bytes.append(contentsOf: ",\"type\":\"pin\",\"pin\":".utf8)
            JSON.appendPin(pin, distance: distance, to: &bytes)
        case .gone(_, let id):
            bytes.append(contentsOf: ",\"type\":\"gone\",\"id\":".utf8)
            JSON.encodeString(id, into: &bytes)
        case .overflow:
            break
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
