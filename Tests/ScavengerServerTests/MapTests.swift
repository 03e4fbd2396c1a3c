import Foundation
import Logging
import NIOCore
@testable import ScavengerBoard
import ScavengerCore
import ScavengerFeed
import ScavengerServer
import ScavengerTestSupport
import Testing

extension Conversation {
    /// MAP's reply for a box around the world at zoom 0.
    func worldMap(_ options: String = "") async throws -> JSONObject {
        try await ok("MAP -90 -180 90 180 ZOOM 0 \(options)")
    }
}

// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("MAP and WATCH MAP over TCP with PostgreSQL, on two daemons", .timeLimit(.minutes(10)))
struct MapTests {
    @Test("bad requests are BAD_ARGUMENT and change nothing")
    func badRequests() async throws {
        let lines = [
            "MAP 91 0 1 1 ZOOM 3", "MAP 0 0 -91 1 ZOOM 3", "MAP 2 0 1 1 ZOOM 3", "MAP 0 -181 1 1 ZOOM 3",
            "MAP 0 0 1 1 ZOOM 23", "MAP 0 0 1 1 ZOOM -1", "MAP 0 0 1 1 ZOOM 1.5", "MAP 0 0 1 1 ZOM 3",
            "MAP 0 0 1 1 ZOOM 3 LIMIT 0", "MAP 0 0 1 1 ZOOM 3 LIMIT 2001", "MAP 0 0 1 1 ZOOM 3 KIND video",
            "MAP 0 0 1 1 ZOOM 3 COLOR red", "MAP -80 -180 80 180 ZOOM 12", "MAP x 0 1 1 ZOOM 3",
            "WATCH MAP 0 0 1 1 ZOOM 23", "WATCH MAP 0 0 1 1 ZOOM 3 KIND text", "WATCH MAP -80 -180 80 180 ZOOM 12",
        ]
        try await withDatabaseServer { address, _ in
            try await converse(address) { client in
                for line in lines {
                    let reply = try await client.call(line)
                    #expect(reply.hasPrefix("ERR BAD_ARGUMENT "), "\(line): \(reply)")
                }
                #expect(try await client.worldMap()["total"].int == 0)
                #expect(try await client.call("PING").hasPrefix("OK"))
            }
        }
    }

    @Test("a pin written on either daemon shows in MAP on the other; a hidden one leaves the counts; DELETE too")
    func twoDaemons() async throws {
        try await withDatabaseServer(
            moderationRules: ModerationRules(hideThreshold: 1, minimumReporterAgeSeconds: 0), listening: true
        ) { address, environment in
            let other = environment.secondDaemon()
            var logger = Logger(label: "second-daemon")
            logger.logLevel = .warning
            let otherListener = FeedListener(feed: other.feed, logger: logger, listening: try await other.feed.startListening())
            try await withServer(board: other, alongside: [otherListener]) { otherAddress, _ in
                try await eventually("the second daemon's feed is loaded") { other.feed.isLoaded }
                try await converse(address) { alice in
                    try await alice.register("alice")
                    let first = try await alice.ok("POST 48.8566 2.3522 one")["pin"]["id"].string
                    _ = try await alice.ok("POST 48.8567 2.3523 two")
                    let photo = try await alice.ok("POSTPHOTO 48.85 2.35 \(Data(PhotoFixtures.jpeg()).base64EncodedString())")["pin"]
                    let map = try await alice.ok("MAP 48.8 2.2 48.9 2.5 ZOOM 10")
                    #expect(map["total"].int == 3)
                    let cells = map["cells"].array
                    #expect(cells.map { $0["count"].int ?? 0 }.reduce(0, +) == 3)
                    #expect(try await alice.ok("MAP 48.8 2.2 48.9 2.5 ZOOM 10 KIND photo")["total"].int == 1)
                    // At zoom 18 the photo is alone in its cell: the cell holds the pin as NEARBY shows it.
                    let single = try await alice.ok("MAP 48.849 2.349 48.851 2.351 ZOOM 18 KIND photo")["cells"][0]
                    #expect(single["count"].int == 1)
                    #expect(try single["pin"]["id"].string == photo["id"].string)
                    #expect(single["lat"].double == photo["lat"].double && single["lon"].double == photo["lon"].double)
                    #expect(single["box"].array.count == 4)

                    try await converse(otherAddress) { bob in
                        try await bob.register("bob")
                        // The first daemon's pins on the second.
                        try await eventually("the second daemon counts the first one's pins") {
                            (try? await bob.worldMap()["total"].int) == 3
                        }
                        _ = try await bob.ok("POST -33.86 151.2 sydney")
                        // A report by bob hides alice's pin (threshold 1), on both daemons.
                        _ = try await bob.ok("REPORT \(first) spam")
                        try await eventually("the second daemon no longer counts the hidden pin") {
                            (try? await bob.worldMap()["total"].int) == 3
                        }
                    }
                    try await eventually("the first daemon counts the second one's pin and not the hidden one") {
                        let world = try? await alice.worldMap()["total"].int
                        let sydney = try? await alice.ok("MAP -34 151 -33 152 ZOOM 5")["total"].int
                        let paris = try? await alice.ok("MAP 48.8 2.2 48.9 2.5 ZOOM 10")["total"].int
                        return world == 3 && sydney == 1 && paris == 2
                    }
                    #expect(try await alice.call("DELETE \(photo["id"].string)") == "OK true")
                    #expect(try await alice.worldMap()["total"].int == 2)
                    try await converse(otherAddress) { reader in
                        try await eventually("the delete reaches the second daemon") {
                            (try? await reader.worldMap()["total"].int) == 2
                        }
                    }
                }
            }
            await other.passwords.shutdown()
        }
    }

    @Test("WATCH MAP: the changed cells, at most one event a second of the feed's clock; an emptied cell has count 0")
    func watchMap() async throws {
        let clock = HeldClock()
        try await withDatabaseServer(listening: true, clock: clock) { address, environment in
            try await converse(address) { watcher in
                let started = try await watcher.ok("WATCH MAP 10 20 11 21 ZOOM 8")
                let watch = try started["watch"].string
                #expect(started["resumed"].bool == false)
                try await converse(address) { writer in
                    try await writer.register("alice")
                    let id = try await writer.ok("POST 10.5 20.5 here")["pin"]["id"].string
                    _ = try await writer.ok("POST 10.5 20.5 again")
                    _ = try await writer.ok("POST 40 40 elsewhere")
                    clock.advance(seconds: 1)
                    let event = try await watcher.event()
                    #expect(try event["watch"].string == watch && event["type"].string == "cells")
                    #expect(event["cells"].array.count == 1)
                    #expect(event["cells"][0]["count"].int == 2)
                    #expect(event["cells"][0]["pin"].isNull)
                    // Within the same second nothing more goes, however much changes.
                    #expect(try await writer.call("DELETE \(id)") == "OK true")
                    let second = try await writer.ok("POST 10.5 20.5 third")["pin"]["id"].string
                    #expect(try await writer.call("DELETE \(second)") == "OK true")
                    environment.feed.tickMapWatches()
                    clock.advance(seconds: 1)
                    let next = try await watcher.event()
                    #expect(next["cells"][0]["count"].int == 1)
                    #expect(try await watcher.call("UNWATCH \(watch)") == "OK true")
                    #expect(environment.feed.mapWatchCount == 0)
                }
            }
        }
    }

    @Test("a crowd writes pins at once on two daemons: MAP's totals on both equal the database's count")
    func crowd() async throws {
        try await withTwoDaemons { a, b, environment in
            let names = (0 ..< 16).map { String(format: "mapper%02d", $0) }
            try await registerAll(names, at: a)
            try await asCrowd(names.enumerated().map { ($0.element, $0.offset % 2 == 0 ? a : b) }) { crowd in
                let requests = names.indices.map { "POST \(-60 + Double($0) * 7.5) \(-170 + Double($0) * 21) crowd" }
                let replies = try await atOnce(crowd, requests)
                expectNoFailures(replies, "POST")
                #expect(replies.allSatisfy { $0.hasPrefix("OK ") })
            }
            let counted = try await environment.pool.query("SELECT count(*) AS n FROM pins WHERE expires_at > now()")
            let total: Int = try counted[0].int("n")
            #expect(total == names.count)
            for daemon in [a, b] {
                try await converse(daemon) { reader in
                    try await eventually("the daemon counts every pin") { (try? await reader.worldMap()["total"].int) == total }
                    let cells = try await reader.ok("MAP -90 -180 90 180 ZOOM 3")["cells"].array
                    #expect(cells.map { $0["count"].int ?? 0 }.reduce(0, +) == total)
                }
            }
        }
    }
}
