import Foundation
import ScavengerCore
import ScavengerTestSupport
import Testing

@Suite("Cursors over TCP with PostgreSQL")
struct CursorTests {
    @Test("a REPLIES cursor works for its own pin only; tampered ones are BAD_ARGUMENT, never INTERNAL")
    func repliesCursors() async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { client in
                try await client.register("carol")
                let first = try await client.ok("POST 1 1 first")["pin"]["id"].string
                let second = try await client.ok("POST 1 1 second")["pin"]["id"].string
                var replies: [String] = []
                for index in 0 ..< 3 {
                    replies.append(try await client.ok("REPLY \(first) \(quoted("reply \(index)"))")["reply"]["id"].string)
                }
                _ = try await client.ok("REPLY \(second) other")
                let page = try await client.ok("REPLIES \(first) LIMIT 1")
                let cursor = try page["next"].string
                let reply = replies[0]
                let tag = try #require(cursor.split(separator: "_").first)

                // Its own pin: the next page.
                let next = try await client.ok("REPLIES \(first) LIMIT 1 CURSOR \(cursor)")
                #expect(try next["replies"][0]["id"].string == replies[1])

                let notACursor = "ERR BAD_ARGUMENT CURSOR is not a cursor this command returned"
                let cases: [(pin: String, cursor: String, expected: String)] = [
                    // Another pin's chat: refused, not an empty page.
                    (second, cursor, "ERR BAD_ARGUMENT CURSOR belongs to another query (the replies of another pin)"),
                    // Times PostgreSQL would overflow on, in the older form and in this one.
                    (first, "9223372036854775807_\(reply)", notACursor),
                    (first, "-9223372036854775808_\(reply)", notACursor),
                    (first, "\(tag)_9223372036854775807_\(reply)", notACursor),
                    (first, "\(tag)_253402300800000000_\(reply)", notACursor),
                    (first, "\(tag)_-1_\(reply)", notACursor),
                    // The older form with an ordinary time: no longer accepted.
                    (first, "1700000000000000_\(reply)", notACursor),
                    (first, "\(tag)_0_", notACursor),
                ]
                for (pin, text, expected) in cases {
                    #expect(try await client.call("REPLIES \(pin) CURSOR \(text)") == expected, "\(text)")
                }
                // The extremes of the accepted range are pages, not errors.
                let earliest = try await client.ok("REPLIES \(first) CURSOR \(tag)_0_\(reply)")
                #expect(earliest["replies"].array.count == 3)
                let latest = try await client.ok("REPLIES \(first) CURSOR \(tag)_253402300799999999_\(reply)")
                #expect(latest["replies"].array.isEmpty)
                #expect(latest["next"].isNull)
            }
        }
    }

    @Test("MODLOG cursors: out-of-range ids are BAD_ARGUMENT, any positive id a page", arguments: [
        ("0", false), ("-1", false), ("99999999999999999999", false), ("+1", false), ("1", true), ("9223372036854775807", true),
    ])
    func modlogCursors(cursor: String, accepted: Bool) async throws {
        try await withDatabaseServer { address, environment in
            try await asUser("boss", role: .admin, address, environment) { (boss: Conversation) async throws in
                let reply = try await boss.call("MODLOG CURSOR \(cursor)")
                if accepted {
                    #expect(reply.hasPrefix("OK "), "\(reply)")
                } else {
                    #expect(reply == "ERR BAD_ARGUMENT CURSOR is not a cursor MODLOG returned")
                }
            }
        }
    }
}
