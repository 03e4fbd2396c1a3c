import Foundation
@testable import ScavengerClient
import ScavengerTestSupport
import Testing

@Suite("ScavengerClient: hunt watches", .timeLimit(.minutes(10)))
struct HuntWatchTests {
    @Test("watchHunt delivers hints, finds, scores, badges and chat; after a dropped connection it says reconnected and goes on")
    func huntEvents() async throws {
        try await Daemon.with { daemon in
            let host = try daemon.client()
            let player = try daemon.client()
            defer { Task { await host.close(); await player.close() } }
            _ = try await host.register(username: "hostess", email: "h@example.org", password: "password1")
            _ = try await player.register(username: "alice", email: "a@example.org", password: "password1")
            let hunt = try await host.createHunt(name: "Live")
            let stop = try await host.addStop(hunt: hunt.id, lat: 1, lon: 1, radiusMeters: 50, points: 10, title: "One")
            _ = try await player.join(hunt.code!)

            let events = Collected<HuntEvent>()
            let watching = Task { for try await event in player.watchHunt(hunt.id) { events.append(event) } }
            try await eventually("the watch is in place") { events.all.contains(.started) }
            _ = try await host.startHunt(hunt.id)
            try await eventually("the start arrives") {
                events.all.contains { if case let .hunt(seen) = $0 { seen.state == .running } else { false } }
            }
            try await host.hint(hunt.id, text: "look up")
            _ = try await player.checkIn(stop: stop.id, lat: 1, lon: 1)
            let message = try await host.reply(to: hunt.id, text: "well done")
            try await eventually("hint, find, score and chat arrive") {
                let all = events.all
                return all.contains { if case let .hint(hint) = $0 { hint.text == "look up" } else { false } }
                    && all.contains(.found(player: "alice", stop: stop.id, points: 10))
                    && all.contains { if case let .score(entry) = $0 { entry.player == "alice" && entry.points == 10 } else { false } }
                    && all.contains(.reply(message))
                    && all.contains { if case let .badge(player, badge) = $0 { player == "alice" && badge.id == "first-find" } else { false } }
            }
            // The connection drops: the watch starts again and says so; later events still come.
            await player.disconnect()
            try await eventually("the watch says it reconnected") { events.all.contains(.reconnected) }
            try await host.hint(hunt.id, text: "second hint")
            try await eventually("the second hint arrives") {
                events.all.contains { if case let .hint(hint) = $0 { hint.text == "second hint" } else { false } }
            }
            #expect(events.all.filter { $0 == .reconnected }.count == 1)
            // No event carries the join code.
            #expect(!events.all.contains { if case let .hunt(seen) = $0 { seen.code != nil } else { false } })
            watching.cancel()
        }
    }

    @Test("WATCH HUNT's errors end the stream with the protocol's code")
    func huntWatchError() async throws {
        try await Daemon.with { daemon in
            let client = try daemon.client()
            defer { Task { await client.close() } }
            let error = await #expect(throws: ScavengerError.self) {
                for try await _ in client.watchHunt("hnothing") {}
            }
            #expect(error?.code == .unauthorized)
        }
    }
}

@Suite("ScavengerClient's parts that need no server")
struct ClientUnitTests {
    @Test(
        "ERR lines become ScavengerError, with RATE_LIMITED's seconds and TOO_FAR's metres",
        arguments: [
            ("ERR NOT_FOUND no such pin", ScavengerError(code: .notFound, message: "no such pin")),
            ("ERR RATE_LIMITED 42 too many posts", ScavengerError(code: .rateLimited, message: "too many posts", retryAfterSeconds: 42)),
            ("ERR TOO_FAR 122 the fix is 122 m away", ScavengerError(code: .tooFar, message: "the fix is 122 m away", distanceMeters: 122)),
            ("ERR BANNED permanent", ScavengerError(code: .banned, message: "permanent")),
            ("ERR INTERNAL", ScavengerError(code: .internal, message: "")),
        ])
    func errors(_ line: String, _ expected: ScavengerError) {
        #expect(ScavengerError(errLine: line[...]) == expected)
        #expect(ScavengerError(errLine: "OK true") == nil)
    }

    @Test(
        "tokens: plain words as they are, anything else a JSON string that decodes to the text",
        arguments: ["p2abc", "52.52", "", "two words", "quote \" and \\ backslash", "line\nbreak\ttab", "\"starts quoted", "ünïcode ☕", "\u{1}"])
    func tokens(_ text: String) throws {
        let token = ScavengerClient.token(text)
        #expect(!token.contains(" ") || token.hasPrefix("\""))
        #expect(!token.contains("\n"))
        if token.hasPrefix("\"") {
            #expect(try JSONDecoder().decode(String.self, from: Data(token.utf8)) == text)
        } else {
            #expect(token == text)
        }
    }

    @Test("REQUEST keys: 22 characters of A-Z a-z 0-9, never the same twice in 10,000")
    func requestKeys() {
        let keys = (0 ..< 10_000).map { _ in ScavengerClient.newRequestKey() }
        #expect(Set(keys).count == keys.count)
        #expect(keys.allSatisfy { $0.count == 22 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } })
    }

    @Test("back-off: doubles from the initial wait, capped at the maximum, jittered down by at most half")
    func backoff() throws {
        let client = try ScavengerClient(ScavengerClient.Configuration(initialBackoff: .milliseconds(100), maximumBackoff: .seconds(2)))
        for attempt in 1 ... 12 {
            let full = min(2000.0, 100 * pow(2, Double(attempt - 1)))
            for _ in 0 ..< 50 {
                let wait = client.backoff(attempt) / .milliseconds(1)
                #expect(wait >= full / 2 - 0.001 && wait <= full + 0.001, "attempt \(attempt): \(wait) ms")
            }
        }
    }
}
