import ScavengerBoard
import ScavengerCore

/// NEARBY, REGIONS, REGION: the feeds, answered from memory.
enum FeedCommands {
    struct Nearby: Sendable {
        var lat: Double
        var lon: Double
        var radius: Double
        var limit: Int
        var kind: PinKind?
        var cursor: NearbyCursor?
    }

    struct RegionRequest: Sendable {
        var name: String
        var limit: Int
        var kind: PinKind?
        var cursor: RegionCursor?
    }

    static func kind(_ token: Token?) throws(CommandError) -> PinKind? {
        guard let token else { return nil }
        guard let kind = PinKind(rawValue: token.text.asciiLowercased) else {
            throw .badArgument("KIND must be text or photo")
        }
        return kind
    }

    static let all: [CommandSpec] = [
        CommandSpec(
            "NEARBY", arity: 3 ... 9, syntax: "NEARBY lat lon radius_m [LIMIT n] [CURSOR c] [KIND text|photo]",
            summary: "Live pins within radius_m metres (great-circle), nearest first, with distance_m; follow `next` for more.",
            parse: { arguments -> Nearby in
                let (lat, lon, radius) = try arguments.circle()
                let options = try arguments.options(["LIMIT", "CURSOR", "KIND"])
                var cursor: NearbyCursor?
                if let token = options["CURSOR"] {
                    guard let parsed = NearbyCursor(encoded: token.text) else {
                        throw CommandError.badArgument("CURSOR is not a cursor NEARBY returned")
                    }
                    cursor = parsed
                }
                return Nearby(
                    lat: lat, lon: lon, radius: radius, limit: try Arguments.pageLimit(options["LIMIT"]),
                    kind: try kind(options["KIND"]), cursor: cursor)
            },
            answer: { request, context in
                let query = NearbyQuery(
                    lat: request.lat, lon: request.lon, radius: request.radius, limit: request.limit, kind: request.kind,
                    after: request.cursor)
                return try context.board.withNearby(query) { result in
                    CommandOutcome(.ok(JSON.page(result.pins, next: result.next?.encoded) {
                        JSON.appendPin($0.record, distance: $0.distance, to: &$1)
                    }))
                }
            }),
        CommandSpec(
            "REGIONS", arity: 0 ... 0, syntax: "REGIONS", summary: "The named regions with their numbers of live pins.",
            parse: { _ in () },
            answer: { _, context in
                CommandOutcome(.ok(.array(try context.board.regionCounts().map { ["name": .string($0.name), "pins": .int($0.pins)] })))
            }),
        CommandSpec(
            "REGION", arity: 1 ... 7, syntax: "REGION name [LIMIT n] [CURSOR c] [KIND text|photo]",
            summary: "Live pins inside a named region, newest first; follow `next` for more.",
            parse: { arguments -> RegionRequest in
                let name = try arguments.required("region name").text
                let options = try arguments.options(["LIMIT", "CURSOR", "KIND"])
                var cursor: RegionCursor?
                if let token = options["CURSOR"] {
                    guard let parsed = RegionCursor(encoded: token.text) else {
                        throw CommandError.badArgument("CURSOR is not a cursor REGION returned")
                    }
                    cursor = parsed
                }
                return RegionRequest(
                    name: name, limit: try Arguments.pageLimit(options["LIMIT"]), kind: try kind(options["KIND"]),
                    cursor: cursor)
            },
            answer: { request, context in
                let found = try context.board.withRegionPage(
                    named: request.name, limit: request.limit, kind: request.kind, after: request.cursor
                ) {
                    CommandOutcome(.ok(JSON.page($0.pins, next: $0.next?.encoded) { JSON.appendPin($0, distance: nil, to: &$1) }))
                }
                guard let found else {
                    throw CommandError(.notFound, "no region named \(Reply.echo(request.name))")
                }
                return found
            }),
    ]
}
