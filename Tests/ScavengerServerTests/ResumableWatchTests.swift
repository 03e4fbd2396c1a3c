import Foundation
import Postgres
@testable import ScavengerBoard
import ScavengerCore
import ScavengerFeed
import ScavengerServer
import ScavengerStore
import ScavengerTestSupport
import Testing

extension Conversation {
    /// Starts a watch; returns its id, its `seq` and `resumed`.
    func startWatch(_ arguments: String) async throws -> (id: String, seq: Int, resumed: Bool) {
        let reply = try await ok("WATCH \(arguments)")
        guard let seq = reply["seq"].int, let resumed = reply["resumed"].bool else { throw UnexpectedReply(line: "\(reply.value)") }
        return (try reply["watch"].string, seq, resumed)
    }

    /// Events, in order, up to and including the first that `last` accepts.
    func events(through last: (JSONObject) throws -> Bool) async throws -> [JSONObject] {
        var events: [JSONObject] = []
        while true {
            let event = try await event()
            events.append(event)
            if try last(event) { return events }
        }
    }
}

/// What an event says, in short: `pin <id>`, `gone <id>`, `ready`.
func summary(_ event: JSONObject) throws -> String {
    switch try event["type"].string {
    case "pin": return "pin \(try event["pin"]["id"].string)"
    case "gone": return "gone \(try event["id"].string)"
    case let other: return other
    }
}

/// Whether an event is the `pin` event of `id`.
func isPin(_ id: String) -> (JSONObject) throws -> Bool {
    { event in try event["type"].string == "pin" && event["pin"]["id"].string == id }
}

// Resumable area watches (protocol 1.2): `seq` on every event, `SNAPSHOT`, `SINCE`. Nothing here
// waits for an amount of time: a write's event is awaited, and a later write of the test's own
// (a sentinel) marks the end of what came before it, since events follow the change log's order.
@Suite("WATCH: seq, SNAPSHOT and SINCE over TCP with PostgreSQL", .timeLimit(.minutes(10)))
struct ResumableWatchTests {
    @Test("every event carries a seq past the reply's, increasing; a plain WATCH answers seq and resumed false")
    func seqIncreases() async throws {
        try await withDatabaseServer(listening: true) { address, _ in
            try await converse(address) { watcher in
                let watch = try await watcher.startWatch("10 20 1000")
                #expect(!watch.resumed)
                try await converse(address) { writer in
                    try await writer.register("alice")
                    var ids: [String] = []
                    for index in 0 ..< 4 {
                        let (lat, lon) = north(of: 10, 20, metres: Double(index) * 100)
                        ids.append(try await writer.ok("POST \(lat) \(lon) p\(index)")["pin"]["id"].string)
                    }
                    #expect(try await writer.call("DELETE \(ids[1])") == "OK true")
                    let events = try await watcher.events(through: { try $0["type"].string == "gone" })
                    #expect(try events.map(summary) == ids.map { "pin \($0)" } + ["gone \(ids[1])"])
                    let seqs = events.compactMap { $0["seq"].int }
                    #expect(seqs.count == events.count)
                    #expect(seqs.first.map { $0 > watch.seq } == true)
                    #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "\(seqs)")
                }
            }
        }
    }

    @Test("SNAPSHOT: the pins inside at the reply's seq, then ready, then live events; pins written meanwhile come exactly once")
    func snapshotExactlyOnce() async throws {
        try await withDatabaseServer(listening: true) { address, _ in
            try await converse(address) { writer in
                try await writer.register("alice")
                var before: Set<String> = []
                for index in 0 ..< 5 {
                    let (lat, lon) = north(of: 10, 20, metres: Double(index) * 50)
                    before.insert(try await writer.ok("POST \(lat) \(lon) before\(index)")["pin"]["id"].string)
                }
                let (farLat, farLon) = north(of: 10, 20, metres: 5000)
                _ = try await writer.ok("POST \(farLat) \(farLon) outside")
                try await converse(address) { watcher in
                    // Writes on another connection while the watch starts.
                    async let written: [String] = converseReturning(address) { other in
                        _ = try await other.ok("LOGIN alice password1")
                        var ids: [String] = []
                        for index in 0 ..< 20 {
                            let (lat, lon) = north(of: 10, 20, metres: 10 + Double(index))
                            ids.append(try await other.ok("POST \(lat) \(lon) meanwhile\(index)")["pin"]["id"].string)
                        }
                        return ids
                    }
                    let watch = try await watcher.startWatch("10 20 1000 SNAPSHOT")
                    #expect(!watch.resumed)
                    let snapshot = try await watcher.events(through: { try $0["type"].string == "ready" })
                    #expect(snapshot.allSatisfy { $0["seq"].int == watch.seq })
                    let meanwhile = try await written
                    let sentinel = try await writer.ok("POST 10 20 sentinel")["pin"]["id"].string
                    let live = try await watcher.events(through: isPin(sentinel))
                    #expect(live.allSatisfy { ($0["seq"].int ?? 0) > watch.seq })
                    let seen = try (snapshot + live).filter { try $0["type"].string == "pin" }.map { try $0["pin"]["id"].string }
                    #expect(seen.count == Set(seen).count, "a pin came twice: \(seen)")
                    #expect(Set(seen) == before.union(meanwhile).union([sentinel]))
                    #expect(try live.allSatisfy { try $0["type"].string == "pin" })
                }
            }
        }
    }

    @Test("SINCE after a disconnect replays exactly the changes inside the circle: added, deleted, hidden; none outside")
    func sinceReplaysMissedChanges() async throws {
        try await withDatabaseServer(
            moderationRules: ModerationRules(hideThreshold: 1, minimumReporterAgeSeconds: 0), listening: true
        ) { address, _ in
            try await converse(address) { writer in
                try await writer.register("alice")
                let kept = try await writer.ok("POST 10 20 kept")["pin"]["id"].string
                let deleted = try await writer.ok("POST 10 20 deleted")["pin"]["id"].string
                let hidden = try await writer.ok("POST 10 20 hidden")["pin"]["id"].string
                // A watch, its events read, then the connection drops.
                let seq = try await converseReturning(address) { watcher in
                    let watch = try await watcher.startWatch("10 20 1000")
                    let marker = try await writer.ok("POST 10 20 marker")["pin"]["id"].string
                    let events = try await watcher.events(through: isPin(marker))
                    return try #require(events.last?["seq"].int.map { max($0, watch.seq) })
                }
                // Missed while away.
                let added = try await writer.ok("POST 10 20 added")["pin"]["id"].string
                let (farLat, farLon) = north(of: 10, 20, metres: 3000)
                let outside = try await writer.ok("POST \(farLat) \(farLon) outside")["pin"]["id"].string
                #expect(try await writer.call("DELETE \(outside)") == "OK true")
                #expect(try await writer.call("DELETE \(deleted)") == "OK true")
                try await converse(address) { reporter in
                    try await reporter.register("bob")
                    _ = try await reporter.ok("REPORT \(hidden) spam")
                }
                try await converse(address) { watcher in
                    let watch = try await watcher.startWatch("10 20 1000 SINCE \(seq)")
                    #expect(watch.resumed)
                    #expect(watch.seq > seq)
                    let sentinel = try await writer.ok("POST 10 20 sentinel")["pin"]["id"].string
                    let events = try await watcher.events(through: isPin(sentinel))
                    let replay = events.dropLast()
                    #expect(try replay.map(summary) == ["pin \(added)", "gone \(deleted)", "gone \(hidden)"])
                    let seqs = replay.compactMap { $0["seq"].int }
                    #expect(seqs.count == replay.count && seqs.allSatisfy { $0 > seq && $0 <= watch.seq })
                    #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "\(seqs)")
                    #expect((events.last?["seq"].int ?? 0) > watch.seq)
                    _ = kept
                }
                // Resuming at the log's end replays nothing.
                try await converse(address) { watcher in
                    let now = try await watcher.startWatch("10 20 1000")
                    let again = try await watcher.startWatch("10 20 1000 SINCE \(now.seq)")
                    #expect(again.resumed && again.seq >= now.seq)
                    #expect(try await watcher.call("PING") == "OK \"PONG\"")
                }
            }
        }
    }

    @Test("SINCE after a hide: a pin hidden before the place and deleted after it is not gone again; the watcher that stayed saw the same")
    func sinceAfterHideMatchesSteadyWatcher() async throws {
        try await withDatabaseServer(
            moderationRules: ModerationRules(hideThreshold: 1, minimumReporterAgeSeconds: 0), listening: true
        ) { address, _ in
            try await converse(address) { writer in
                try await writer.register("alice")
                let doomed = try await writer.ok("POST 10 20 doomed")["pin"]["id"].string
                let shown = try await writer.ok("POST 10 20 shown")["pin"]["id"].string
                /// Starts a snapshot watch and reads until `ready` and both pins have come (in the
                /// snapshot, or live when the feed had not announced them yet): the watch holds them.
                func watchHolding(_ conversation: Conversation) async throws {
                    _ = try await conversation.startWatch("10 20 1000 SNAPSHOT")
                    var held: Set<String> = []
                    var ready = false
                    while !ready || !held.isSuperset(of: [doomed, shown]) {
                        let event = try await conversation.event()
                        switch try event["type"].string {
                        case "pin": held.insert(try event["pin"]["id"].string)
                        case "ready": ready = true
                        case let other: Issue.record("unexpected \(other) before the hide")
                        }
                    }
                }
                try await converse(address) { steady in
                    try await watchHolding(steady)
                    // A watcher that sees the hide, then drops.
                    let seq = try await converseReturning(address) { watcher in
                        try await watchHolding(watcher)
                        try await converse(address) { reporter in
                            try await reporter.register("bob")
                            _ = try await reporter.ok("REPORT \(doomed) spam")
                        }
                        let events = try await watcher.events { try summary($0) == "gone \(doomed)" }
                        #expect(try events.map(summary) == ["gone \(doomed)"])
                        return try #require(events.last?["seq"].int)
                    }
                    // Missed while away: the hidden pin deleted, the shown one too, one added.
                    #expect(try await writer.call("DELETE \(doomed)") == "OK true")
                    #expect(try await writer.call("DELETE \(shown)") == "OK true")
                    let added = try await writer.ok("POST 10 20 added")["pin"]["id"].string
                    try await converse(address) { watcher in
                        let watch = try await watcher.startWatch("10 20 1000 SINCE \(seq)")
                        #expect(watch.resumed)
                        let sentinel = try await writer.ok("POST 10 20 sentinel")["pin"]["id"].string
                        let events = try await watcher.events(through: isPin(sentinel))
                        #expect(try events.map(summary) == ["gone \(shown)", "pin \(added)", "pin \(sentinel)"])
                        // The watcher that stayed: the hide's gone, then the same as the resumed one.
                        let seen = try await steady.events(through: isPin(sentinel))
                        #expect(try seen.map(summary) == ["gone \(doomed)", "gone \(shown)", "pin \(added)", "pin \(sentinel)"])
                    }
                }
            }
        }
    }

    @Test("SINCE with KIND: changes of the other kind are not replayed, deleted ones included")
    func sinceWithKind() async throws {
        try await withDatabaseServer(listening: true) { address, _ in
            try await converse(address) { writer in
                try await writer.register("alice")
                let text = try await writer.ok("POST 10 20 words")["pin"]["id"].string
                let seq = try await converseReturning(address) { try await $0.startWatch("10 20 500 KIND photo").seq }
                #expect(try await writer.call("DELETE \(text)") == "OK true")
                _ = try await writer.ok("POST 10 20 more-words")
                let photo = try await writer.ok("POSTPHOTO 10 20 \(Data(PhotoFixtures.jpeg()).base64EncodedString())")["pin"]["id"].string
                try await converse(address) { watcher in
                    let watch = try await watcher.startWatch("10 20 500 KIND photo SINCE \(seq)")
                    #expect(watch.resumed)
                    let sentinel = try await writer.ok("POSTPHOTO 10 20 \(Data(PhotoFixtures.jpeg()).base64EncodedString())")["pin"]["id"].string
                    let events = try await watcher.events(through: isPin(sentinel))
                    #expect(try events.map(summary) == ["pin \(photo)", "pin \(sentinel)"])
                }
            }
        }
    }

    @Test("SINCE a seq the trimmed log no longer reaches: resumed false, no replay, live events still come")
    func notResumedAfterTrim() async throws {
        try await withDatabaseServer(listening: true) { address, environment in
            try await converse(address) { writer in
                try await writer.register("alice")
                let seq = try await converseReturning(address) { try await $0.startWatch("10 20 1000").seq }
                _ = try await writer.ok("POST 10 20 one")
                _ = try await writer.ok("POST 10 20 two")
                // Everything but the newest entry goes (`scavengerd expire --keep-changes` trims by age).
                _ = try await environment.database.trimFeedChanges(keepSeconds: 0, limit: 1000)
                try await converse(address) { watcher in
                    let watch = try await watcher.startWatch("10 20 1000 SINCE \(seq)")
                    #expect(!watch.resumed)
                    #expect(watch.seq > seq)
                    #expect(try await watcher.call("PING") == "OK \"PONG\"")
                    let live = try await writer.ok("POST 10 20 live")["pin"]["id"].string
                    let event = try await watcher.event()
                    #expect(try summary(event) == "pin \(live)")
                    #expect((event["seq"].int ?? 0) > watch.seq)
                }
            }
        }
    }

    @Test("SNAPSHOT with SINCE, a negative, fractional or missing seq, and a seq past the log's end are BAD_ARGUMENT", arguments: [
        "WATCH 10 20 100 SNAPSHOT SINCE 0", "WATCH 10 20 100 SINCE 0 SNAPSHOT", "WATCH 10 20 100 SINCE -1",
        "WATCH 10 20 100 SINCE 1.5", "WATCH 10 20 100 SINCE", "WATCH 10 20 100 SINCE 999999999", "WATCH 10 20 100 SNAPSHOT SNAPSHOT",
    ])
    func rejects(line: String) async throws {
        try await withDatabaseServer { address, environment in
            let reply = try await converseReturning(address) { try await $0.call(line) }
            #expect(reply.hasPrefix("ERR BAD_ARGUMENT "), "\(reply)")
            #expect(environment.feed.watches.count == 0)
        }
    }

    @Test("two daemons: a watcher on one resumes after writes on the other, and with a seq the other gave")
    func twoDaemons() async throws {
        try await withTwoDaemons { address, otherAddress, _ in
            try await converse(otherAddress) { writerOnB in
                try await writerOnB.register("alice")
                let seq = try await converseReturning(address) { try await $0.startWatch("10 20 1000").seq }
                // Written through B while the watcher (on A) is away; A is not waited for.
                let added = try await writerOnB.ok("POST 10 20 from-b")["pin"]["id"].string
                let (farLat, farLon) = north(of: 10, 20, metres: 2000)
                _ = try await writerOnB.ok("POST \(farLat) \(farLon) far-from-b")
                try await converse(address) { watcher in
                    let watch = try await watcher.startWatch("10 20 1000 SINCE \(seq)")
                    #expect(watch.resumed)
                    let event = try await watcher.event()
                    #expect(try summary(event) == "pin \(added)")
                    #expect((event["seq"].int ?? 0) > seq && (event["seq"].int ?? 0) <= watch.seq)
                }
                // A seq B gave, resumed on A at once (A's feed may trail B's, and B's place
                // may still trail B's own new pins, which B announces once its feed reaches
                // them): what came after it is replayed, then the next write comes live.
                let fromB = try await converseReturning(otherAddress) { try await $0.startWatch("10 20 1000").seq }
                try await converse(address) { watcher in
                    let watch = try await watcher.startWatch("10 20 1000 SINCE \(fromB)")
                    #expect(watch.resumed && watch.seq >= fromB)
                    let live = try await writerOnB.ok("POST 10 20 later")["pin"]["id"].string
                    let events = try await watcher.events(through: isPin(live))
                    let replay = events.dropLast()
                    #expect(try replay.allSatisfy { try summary($0) == "pin \(added)" }, "\(events.map(\.value))")
                    #expect(replay.allSatisfy { ($0["seq"].int ?? 0) > fromB && ($0["seq"].int ?? 0) <= watch.seq })
                    #expect((events.last?["seq"].int ?? 0) > watch.seq)
                }
            }
        }
    }
}
