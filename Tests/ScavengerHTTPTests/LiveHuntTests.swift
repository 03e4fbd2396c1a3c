import Foundation
import ScavengerTestSupport
import Testing

/// The JSON object of an `OK {…}` reply or an `EVENT {…}` message (empty for anything else).
private func object(_ message: String?, after prefix: String) -> [String: Any] {
    guard let message, message.hasPrefix(prefix),
          let value = try? JSONSerialization.jsonObject(with: Data(message.dropFirst(prefix.count).utf8)) as? [String: Any]
    else { return [:] }
    return value
}

// Live hunts (protocol 1.2) over the HTTP port's WebSocket: the same WATCH HUNT as on the TCP port
// (ScavengerServerTests' LiveHuntTests), its reply and events each one text message.
// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("Live hunts over the WebSocket (protocol 1.2)", .timeLimit(.minutes(10)))
struct LiveHuntTests {
    @Test("WATCH HUNT over /ws: the OK and the hunt's events (hint, found, score) arrive as text messages without a newline, never with the code")
    func watchHuntOverWebSocket() async throws {
        try await TestEnvironment.make(prefix: "http").use { environment in
            try await withHTTPServer(board: environment.board) { http, _, _ in
                try await withWebSocket(http) { host in
                    #expect(try await host.call("REGISTER host host@example.org password1")?.hasPrefix("OK ") == true)
                    let hunt = object(try await host.call("CREATEHUNT \"Socket hunt\" PUBLIC"), after: "OK ")["hunt"] as? [String: Any] ?? [:]
                    let id = try #require(hunt["id"] as? String)
                    let code = try #require(hunt["code"] as? String)
                    let added = object(try await host.call("ADDSTOP \(id) 48.8566 2.3522 50 10 \"The bridge\""), after: "OK ")
                    let stop = try #require((added["stop"] as? [String: Any])?["id"] as? String)
                    #expect(try await host.call("STARTHUNT \(id)")?.hasPrefix("OK ") == true)

                    try await withWebSocket(http) { amy in
                        #expect(try await amy.call("REGISTER amy amy@example.org password1")?.hasPrefix("OK ") == true)
                        #expect(try await amy.call("JOIN \(code)")?.hasPrefix("OK ") == true)
                        try await withWebSocket(http) { bob in
                            #expect(try await bob.call("REGISTER bob bob@example.org password1")?.hasPrefix("OK ") == true)
                            #expect(try await bob.call("JOIN \(code)")?.hasPrefix("OK ") == true)
                            let watchReply = try #require(try await amy.call("WATCH HUNT \(id)"))
                            let watch = try #require(object(watchReply, after: "OK ")["watch"] as? String, "\(watchReply)")

                            // A hint from the host's socket.
                            #expect(try await host.call("HINT \(id) \"Under the arch\"") == "OK true")
                            let hintMessage = try #require(try await amy.next())
                            #expect(hintMessage.hasPrefix("EVENT {") && !hintMessage.hasSuffix("\n"), "\(hintMessage)")
                            let hint = object(hintMessage, after: "EVENT ")
                            #expect(hint["watch"] as? String == watch)
                            #expect(hint["type"] as? String == "hint")
                            #expect(hint["text"] as? String == "Under the arch")
                            #expect((hint["at"] as? String)?.hasSuffix("Z") == true)

                            // Bob's check-in from his socket: found, then a score for each entry that
                            // changed (bob to 10 points at rank 1, amy from a shared rank 1 to 2), then
                            // the badges it earned (protocol 1.4: his first find, the hunt's only stop).
                            let checkIn = try #require(try await bob.call("CHECKIN \(stop) 48.8566 2.3522"))
                            #expect(checkIn.hasPrefix("OK "), "\(checkIn)")
                            var events: [String] = []
                            while events.count < 5, let message = try await amy.next() { events.append(message) }
                            let parsed = events.map { object($0, after: "EVENT ") }
                            #expect(parsed.map { $0["type"] as? String ?? "?" } == ["found", "score", "score", "badge", "badge"], "\(events)")
                            let badges = parsed.suffix(2)
                            #expect(badges.map { $0["player"] as? String ?? "?" } == ["bob", "bob"])
                            #expect(badges.map { ($0["badge"] as? [String: Any])?["id"] as? String ?? "?" } == ["first-find", "finisher"])
                            #expect(badges.allSatisfy { ($0["badge"] as? [String: Any])?["hunt"] as? String == id })
                            let scoresAndFound = Array(parsed.prefix(3))
                            #expect(parsed.allSatisfy { $0["watch"] as? String == watch })
                            let found = try #require(scoresAndFound.first)
                            #expect(found["player"] as? String == "bob" && found["stop"] as? String == stop && found["points"] as? Int == 10)
                            let entries = scoresAndFound.dropFirst().compactMap { $0["entry"] as? [String: Any] }
                            let ranks = Dictionary(entries.map { ($0["player"] as? String ?? "?", $0["rank"] as? Int ?? 0) }, uniquingKeysWith: { a, _ in a })
                            #expect(ranks == ["bob": 1, "amy": 2])
                            #expect(!(events + [hintMessage, watchReply]).contains { $0.contains("\"code\"") || $0.contains(code) })
                            #expect(events.allSatisfy { !$0.hasSuffix("\n") })

                            #expect(try await amy.call("UNWATCH \(watch)") == "OK true")
                            #expect(try await host.call("HINT \(id) \"Nobody hears this\"") == "OK true")
                            #expect(try await amy.call("PING") == "OK \"PONG\"")
                        }
                    }
                }
            }
        }
    }
}
