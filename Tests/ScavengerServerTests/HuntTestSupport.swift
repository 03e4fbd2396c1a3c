import Base64
import Foundation
import NIOCore
import ScavengerTestSupport
import Testing

// Helpers shared by HuntTests, CheckInTests and LeaderboardTests (protocol 1.2): places and
// distances computed here, apart from the daemon's own geometry; RFC 3339 times from `Date()`;
// a hunt with its stops in one call; many registered users at once; check-ins; paging.

/// A point on the map, written into requests as two plain decimals.
struct Place: Sendable, CustomStringConvertible {
    var lat: Double
    var lon: Double

    /// The point `north` metres north and `east` metres east of this one (on the contract's
    /// sphere; a test that needs the exact distance computes it with ``haversine(_:_:)``).
    func moved(north: Double = 0, east: Double = 0) -> Place {
        let radius = Place.earthRadius
        return Place(
            lat: lat + north / radius * 180 / .pi,
            lon: lon + east / (radius * cos(lat * .pi / 180)) * 180 / .pi)
    }

    /// "lat lon", as the tokens of a request (Swift prints a Double as the shortest decimal that
    /// reads back as the same Double, so the daemon gets exactly these values).
    var description: String { "\(lat) \(lon)" }

    /// The contract's sphere: radius 6,371,008.8 m.
    static let earthRadius = 6_371_008.8
}

/// Where the hunts of these tests take place (Paris, the Pont Neuf): far from 0° and 180°, so
/// every offset is a plain decimal with no exponent.
let huntOrigin = Place(lat: 48.8566, lon: 2.3522)

/// The great-circle distance in metres between `a` and `b` on the contract's sphere, by the
/// haversine.
func haversine(_ a: Place, _ b: Place) -> Double {
    let φ1 = a.lat * .pi / 180
    let φ2 = b.lat * .pi / 180
    let Δφ = (b.lat - a.lat) * .pi / 180
    let Δλ = (b.lon - a.lon) * .pi / 180
    let h = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
    return 2 * Place.earthRadius * asin(min(1, h.squareRoot()))
}

// MARK: Times

/// `date` as RFC 3339 in UTC with whole seconds (`2026-11-21T18:00:00Z`).
func rfc3339(_ date: Date) -> String {
    ISO8601DateFormatter().string(from: date)
}

/// The time at least `seconds` from now, rounded up to a whole second, as RFC 3339 (so the
/// daemon never reads it as nearer than `seconds`).
func rfc3339(secondsFromNow seconds: Double) -> String {
    rfc3339(Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + seconds).rounded(.up)))
}

/// The time a reply holds (RFC 3339 in UTC, whole seconds); throws when it holds none.
func parseTime(_ value: JSONObject) throws -> Date {
    try parseTime(try value.string)
}

/// An RFC 3339 time in UTC with whole seconds; throws for anything else.
func parseTime(_ text: String) throws -> Date {
    guard text.hasSuffix("Z"), text.count == 20, let date = ISO8601DateFormatter().date(from: text) else {
        throw UnexpectedReply(line: "\(text) is not an RFC 3339 time in UTC with whole seconds")
    }
    return date
}

// MARK: Requests and replies

/// A request line of `parts` (those not empty) separated by single spaces.
func request(_ parts: String...) -> String {
    parts.filter { !$0.isEmpty }.joined(separator: " ")
}

/// Records an issue unless `reply` is `ERR <code> …` (the contract leaves most messages open).
func expectError(_ reply: String, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(reply.hasPrefix("ERR \(code) "), "expected ERR \(code), got \(reply)", sourceLocation: sourceLocation)
}

/// Whether `key` is a key of any object anywhere inside `value` (for "no reply to anyone else
/// ever holds the join code").
func holdsKey(_ value: JSONObject, _ key: String) -> Bool {
    func search(_ value: Any) -> Bool {
        if let object = value as? [String: Any] { return object.keys.contains(key) || object.values.contains(where: search) }
        if let array = value as? [Any] { return array.contains(where: search) }
        return false
    }
    return search(value.value)
}

/// The distance of an `ERR TOO_FAR <distance_m> <message>` reply, or nil for any other reply.
func tooFarDistance(_ reply: String) -> Int? {
    let words = reply.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
    guard words.count == 4, words[0] == "ERR", words[1] == "TOO_FAR", !words[3].isEmpty else { return nil }
    return Int(words[2])
}

// MARK: Hunts

/// A `PHOTO` option for check-ins at photo stops: a small JPEG.
let photoOption = "PHOTO \(Base64.encode(PhotoFixtures.jpeg()))"

/// A stop to add to a hunt: where it is (metres from ``huntOrigin``), its radius, points and
/// title, and the rest of its `ADDSTOP` options (`PROOF code CODE secret HIDDEN`, …).
struct StopPlan: Sendable {
    var north: Double = 0
    var east: Double = 0
    var radius: Double = 50
    var points: Int = 10
    var title: String = "stop"
    var options: String = ""

    var place: Place { huntOrigin.moved(north: north, east: east) }

    /// The `ADDSTOP` line that adds this stop to `hunt`.
    func line(hunt: String) -> String {
        request("ADDSTOP \(hunt) \(place) \(radius) \(points) \(quoted(title))", options)
    }
}

/// A hunt made by ``Conversation/makeHunt(_:name:stops:start:)``.
struct MadeHunt: Sendable {
    let id: String
    /// The join code, from the host's reply.
    let code: String
    /// The stops' ids, in their order in the hunt.
    let stops: [String]
    /// Where each stop is.
    let places: [Place]
}

extension Conversation {
    /// `CREATEHUNT name options` (a host's reply: the hunt with its code).
    func createHunt(_ options: String = "PUBLIC", name: String = "Old town") async throws -> JSONObject {
        try await ok(request("CREATEHUNT \(quoted(name))", options))["hunt"]
    }

    /// Adds `plan` to `hunt` and returns the stop.
    func addStop(_ hunt: String, _ plan: StopPlan = StopPlan()) async throws -> JSONObject {
        try await ok(plan.line(hunt: hunt))["stop"]
    }

    /// Creates a hunt (`CREATEHUNT "name" options`) holding `stops`, in order, and starts it
    /// by hand unless `start` is false.
    func makeHunt(_ options: String = "PUBLIC", name: String = "Old town", stops: [StopPlan], start: Bool = true) async throws -> MadeHunt {
        let hunt = try await createHunt(options, name: name)
        let id = try hunt["id"].string
        var ids: [String] = []
        for plan in stops { ids.append(try await addStop(id, plan)["id"].string) }
        if start { _ = try await ok("STARTHUNT \(id)") }
        return MadeHunt(id: id, code: try hunt["code"].string, stops: ids, places: stops.map(\.place))
    }

    /// Joins `hunt` by its code (`AS name` when given) and returns the hunt.
    @discardableResult
    func join(_ hunt: MadeHunt, as name: String? = nil) async throws -> JSONObject {
        try await ok("JOIN \(hunt.code)" + (name.map { " AS \($0)" } ?? ""))["hunt"]
    }

    /// `CHECKIN stop lat lon options`: the raw reply line.
    func checkInReply(_ stop: String, at place: Place, _ options: String = "") async throws -> String {
        try await call(request("CHECKIN \(stop) \(place)", options))
    }

    /// A `CHECKIN` that must succeed: `{"checkin": checkin, "score": score}`.
    @discardableResult
    func checkIn(_ stop: String, at place: Place, _ options: String = "") async throws -> JSONObject {
        try JSONObject(okLine: try await checkInReply(stop, at: place, options))
    }

    /// `HUNT id`.
    func hunt(_ id: String) async throws -> JSONObject {
        try await ok("HUNT \(id)")
    }

    /// Every entry of `hunt`'s leaderboard, following `next` page by page with `LIMIT limit`
    /// (no LIMIT when nil); records an issue if a page is larger than the limit or the pages do
    /// not end.
    func leaderboard(_ hunt: String, limit: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [JSONObject] {
        let limitOption = limit.map { " LIMIT \($0)" } ?? ""
        var entries: [JSONObject] = []
        var cursor: String?
        for _ in 0 ..< 1000 {
            let page = try await ok("LEADERBOARD \(hunt)\(limitOption)" + (cursor.map { " CURSOR \(quoted($0))" } ?? ""))
            let rows = page["entries"].array
            if let limit { #expect(rows.count <= limit, "a page of \(rows.count) entries for LIMIT \(limit)", sourceLocation: sourceLocation) }
            entries += rows
            if page["next"].isNull { return entries }
            cursor = try page["next"].string
        }
        Issue.record("LEADERBOARD's pages did not end", sourceLocation: sourceLocation)
        return entries
    }
}

/// A leaderboard's players, in order.
func players(_ entries: [JSONObject]) throws -> [String] {
    try entries.map { try $0["player"].string }
}

// MARK: Users

/// Registers each of `names`, in order, on a connection of its own, and keeps every connection
/// open for `body`, which gets them in the same order.
func asUsers(
    _ names: [String], _ address: SocketAddress, _ environment: TestEnvironment, _ body: ([Conversation]) async throws -> Void
) async throws {
    try await openUsers(names[...], address, environment, opened: [], body)
}

private func openUsers(
    _ names: ArraySlice<String>, _ address: SocketAddress, _ environment: TestEnvironment, opened: [Conversation],
    _ body: ([Conversation]) async throws -> Void
) async throws {
    guard let name = names.first else { return try await body(opened) }
    try await asUser(name, address, environment) { (client: Conversation) async throws in
        try await openUsers(names.dropFirst(), address, environment, opened: opened + [client], body)
    }
}
