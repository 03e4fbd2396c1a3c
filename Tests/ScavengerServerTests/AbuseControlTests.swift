import Foundation
import Logging
import NIOCore
@testable import ScavengerBoard
import ScavengerCore
import ScavengerFeed
import ScavengerServer
import ScavengerStore
import ScavengerTestSupport
import Sodium
import Synchronization
import Testing

/// Every limit of "Abuse controls", over TCP against PostgreSQL, with small limits set the way
/// `serve`'s flags set them. Clients come from different loopback addresses (127.0.0.x).
@Suite("Abuse controls over TCP with PostgreSQL")
struct AbuseControlTests {
    /// A well-formed 1×1 grey PNG.
    static let onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="

    @Test("failed LOGINs from one address back off; other addresses are not held back")
    func loginBackoffPerAddress() async throws {
        try await withDatabaseServer(configure: {
            $0.loginThrottle = LoginThrottleRules(addressFreeFailures: 3, accountFreeFailures: 100)
        }) { address, _ in
            try await converse(address) { (owner: Conversation) async throws in try await owner.register("alice") }
            // Pipelined, so the 1 s back-off cannot run out between the lines.
            let replies = try await transcript(address, from: "127.0.0.2", String(repeating: "LOGIN alice wrong-guess1\n", count: 3)
                + "LOGIN alice password1\nLOGIN nobody wrong-guess1\n")
            #expect(replies == Array(repeating: "ERR UNAUTHORIZED wrong name or password", count: 3) + Array(
                repeating: "ERR RATE_LIMITED 1 too many failed logins; wait 1 s before trying again", count: 2))
            try await converse(address, from: "127.0.0.3") { (owner: Conversation) async throws in
                #expect(try await owner.call("LOGIN alice password1").hasPrefix("OK "))
            }
        }
    }

    @Test("a locked account still lets its owner in from an address that has not been failing")
    func accountLockSparesCleanAddresses() async throws {
        try await withDatabaseServer(configure: {
            $0.loginThrottle = LoginThrottleRules(addressFreeFailures: 100, accountFreeFailures: 2)
        }) { address, _ in
            try await converse(address) { (owner: Conversation) async throws in try await owner.register("alice") }
            // Pipelined, so the 1 s back-off cannot run out between the lines. The account is
            // locked for this address (by name or email), other accounts are not.
            let replies = try await transcript(
                address, from: "127.0.0.2",
                "LOGIN alice wrong-guess1\nLOGIN alice wrong-guess1\nLOGIN ALICE@example.org wrong-guess2\nLOGIN bob wrong-guess1\n")
            #expect(replies == [
                "ERR UNAUTHORIZED wrong name or password", "ERR UNAUTHORIZED wrong name or password",
                "ERR RATE_LIMITED 1 too many failed logins; wait 1 s before trying again",
                "ERR UNAUTHORIZED wrong name or password",
            ])
            try await converse(address, from: "127.0.0.4") { (owner: Conversation) async throws in
                #expect(try await owner.call("LOGIN alice password1").hasPrefix("OK "))
            }
        }
    }

    @Test("REGISTERs are limited per address")
    func registrationsPerAddress() async throws {
        try await withDatabaseServer(configure: { $0.registrationRate = RateLimit(count: 2, seconds: 3600) }) { address, environment in
            try await converse(address, from: "127.0.0.5") { (client: Conversation) async throws in
                try await client.register("first")
                try await client.register("second")
                expectRateLimited(
                    try await client.call("REGISTER third third@example.org password1"), near: 1800,
                    "too many registrations from your address")
            }
            try await converse(address, from: "127.0.0.6") { (client: Conversation) async throws in try await client.register("third") }
            let rows = try await environment.pool.query("SELECT count(*) FROM users")
            #expect(try rows[0].int(0) as Int == 3)
        }
    }

    @Test("a line deadline that passes while an earlier request waits for its reply closes after that reply")
    func lineDeadlineAfterEarlierReplies() async throws {
        let environment = try await TestEnvironment.make()
        // REGISTER will wait for a hashing thread until the gate opens.
        let gate = Gate()
        let busy = (0 ..< environment.board.passwords.threads).map { _ in
            Task { try await environment.board.passwordQueue.run(first: true, isWanted: { true }) { _ in await gate.wait() } }
        }
        do {
            try await eventually("every hashing thread is busy") { environment.board.passwordQueue.running == environment.board.passwords.threads }
            try await withServer(ServerConfiguration(lineTimeoutSeconds: 1), board: environment.board) { address, _ in
                try await withTimeout(30) {
                    try await TestConnection.talk(address) { writer, reader in
                        try await writer.send("REGISTER bob bob@example.org password1\nPI")
                        // The unfinished line's deadline passes while REGISTER still waits.
                        try await Task.sleep(for: .milliseconds(2500))
                        gate.open()
                        #expect(try await reader.next()?.hasPrefix("OK ") == true)
                        #expect(try await reader.next() == "ERR BAD_REQUEST request line not finished within 1 s; closing")
                        #expect(try await reader.next() == nil)
                    }
                }
            }
        } catch {
            gate.open()
            await environment.shutdown()
            throw error
        }
        gate.open()
        for task in busy { try await task.value }
        await environment.shutdown()
    }

    @Test("REGISTER checks the name is free before hashing, and a full hashing queue answers UNAVAILABLE")
    func hashingQueueIsBounded() async throws {
        try await withDatabaseServer(configure: { $0.passwordQueueLength = 0 }) { address, environment in
            try await converse(address) { (client: Conversation) async throws in try await client.register("alice") }
            // Occupy every hashing thread.
            let gate = Gate()
            let busy = (0 ..< environment.board.passwords.threads).map { _ in
                Task { try await environment.board.passwordQueue.run(first: true, isWanted: { true }) { _ in await gate.wait() } }
            }
            try await eventually("every hashing thread is busy") { environment.board.passwordQueue.running == environment.board.passwords.threads }
            try await converse(address) { (client: Conversation) async throws in
                #expect(try await client.call("REGISTER ALICE other@example.org password1") == "ERR CONFLICT that username is taken")
                #expect(try await client.call("REGISTER bob alice@EXAMPLE.org password1") == "ERR CONFLICT that email is already registered")
                #expect(try await client.call("REGISTER bob bob@example.org password1")
                    == "ERR UNAVAILABLE the server is busy checking passwords; retry in a moment")
                #expect(try await client.call("LOGIN alice password1")
                    == "ERR UNAVAILABLE the server is busy checking passwords; retry in a moment")
            }
            gate.open()
            for task in busy { try await task.value }
            // Nothing was half done, and nothing was counted as a failed login.
            try await converse(address) { (client: Conversation) async throws in
                #expect(try await client.call("LOGIN alice password1").hasPrefix("OK "))
                try await client.register("bob")
            }
        }
    }

    @Test("during a storm of wrong-password LOGINs a real user's LOGIN completes in under a second")
    func realLoginDuringAStorm() async throws {
        // Real argon2id cost on one thread; the storm's address is never held back, so it keeps
        // the queue full.
        try await withDatabaseServer(hashing: .interactive, hashingThreads: 1, configure: {
            $0.loginThrottle = LoginThrottleRules(addressFreeFailures: 1_000_000, accountFreeFailures: 1_000_000)
        }) { address, environment in
            try await converse(address) { (owner: Conversation) async throws in try await owner.register("alice") }
            try await withThrowingTaskGroup(of: Void.self) { attackers in
                // One command at a time per connection: 24 connections keep 23 checks waiting.
                for _ in 0 ..< 24 {
                    attackers.addTask {
                        try? await TestConnection.talk(address, from: "127.0.0.2") { writer, reader in
                            while !Task.isCancelled {
                                try await writer.send("LOGIN alice wrong-password1\n")
                                let line = try await reader.next() ?? ""
                                #expect(line.hasPrefix("ERR UNAUTHORIZED") || line.hasPrefix("ERR UNAVAILABLE") || line.isEmpty)
                            }
                        }
                    }
                }
                try await eventually("16 hashes are waiting") { environment.board.passwordQueue.waiting >= 16 }
                // Best of three, so one stall of a busy test machine does not decide; in the
                // order they came, each would wait for some 23 checks of about 80 ms.
                var fastest = Duration.seconds(3600)
                for _ in 0 ..< 3 {
                    try await converse(address) { (owner: Conversation) async throws in
                        let start = ContinuousClock.now
                        let reply = try await owner.call("LOGIN alice password1")
                        fastest = min(fastest, ContinuousClock.now - start)
                        #expect(reply.hasPrefix("OK "))
                    }
                }
                #expect(fastest < .seconds(1), "the real LOGIN took \(fastest) during the storm")
                // The storm's connections close; what they left in the queue is dropped, not hashed.
                attackers.cancelAll()
                try await attackers.waitForAll()
            }
            try await eventually("the hashing queue is idle") { environment.board.passwordQueue.waiting == 0 && environment.board.passwordQueue.running == 0 }
        }
    }

    @Test("each user's POSTs, POSTPHOTOs and REPLYs have their own buckets; staff get more; nothing over the rate is written")
    func perUserWriteRates() async throws {
        try await withDatabaseServer(configure: {
            $0.writeRates = WriteRates(
                post: RateLimit(count: 2, seconds: 3600), photo: RateLimit(count: 1, seconds: 3600),
                reply: RateLimit(count: 1, seconds: 60), report: nil, staffFactor: 3)
        }) { address, environment in
            try await asUser("alice", address, environment) { (alice: Conversation) async throws in
                let first = try await alice.ok("POST 1 1 one")["pin"]["id"].string
                _ = try await alice.ok("POST 1 1 two")
                expectRateLimited(try await alice.call("POST 1 1 three"), near: 1800, "too many POST requests (at most 2 per 3600 s)")
                _ = try await alice.ok("POSTPHOTO 1 1 \(Self.onePixelPNG)")
                expectRateLimited(try await alice.call("POSTPHOTO 1 1 \(Self.onePixelPNG)"), near: 3600, "too many POSTPHOTO requests")
                // A reply to a pin that is not there spends no token.
                #expect(try await alice.call("REPLY pzzzzzzzzzzzzzzzzzzzzzzzz x") == "ERR NOT_FOUND no such pin")
                _ = try await alice.ok("REPLY \(first) hi")
                expectRateLimited(try await alice.call("REPLY \(first) again"), near: 60, "too many REPLY requests")
                let nearby = try await alice.ok("NEARBY 1 1 100")
                #expect(nearby["pins"].array.count == 3)
                #expect(try await alice.ok("GET \(first)")["pin"]["replies"].int == 1)
            }
            try await asUser("mod", role: .moderator, address, environment) { (moderator: Conversation) async throws in
                _ = try await moderator.call("WHOAMI")
                for index in 0 ..< 6 { _ = try await moderator.ok("POST 2 2 m\(index)") }
                #expect(try await moderator.call("POST 2 2 m6").hasPrefix("ERR RATE_LIMITED "))
            }
        }
    }

    @Test("a rate holds under concurrency, and across two daemons on one database")
    func ratesHoldUnderConcurrencyAndAcrossDaemons() async throws {
        try await withDatabaseServer(configure: {
            $0.writeRates = WriteRates(post: RateLimit(count: 5, seconds: 3600), report: RateLimit(count: 3, seconds: 3600))
        }) { address, environment in
            // A second daemon: its own feed and board on the same database.
            var logger = Logger(label: "second-daemon")
            logger.logLevel = .warning
            let otherFeed = Feed(database: Database(pool: environment.pool), logger: logger)
            try await otherFeed.load()
            let otherHasher = PasswordHasher(parameters: .minimum)
            let other = Board(feed: otherFeed, passwords: otherHasher, rules: environment.board.rules)
            try await withServer(board: other) { otherAddress, _ in
                let token = try await converseReturning(address) { (client: Conversation) async throws in try await client.register("alice") }
                let replies = try await withThrowingTaskGroup(of: String.self) { group in
                    for index in 0 ..< 20 {
                        group.addTask {
                            try await converseReturning(index % 2 == 0 ? address : otherAddress) { (client: Conversation) async throws in
                                _ = try await client.ok("AUTH \(token)")
                                return try await client.call("POST 3 3 p\(index)")
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(replies.filter { $0.hasPrefix("OK ") }.count == 5, "\(replies)")
                #expect(replies.filter { $0.hasPrefix("ERR RATE_LIMITED ") }.count == 15, "\(replies)")
                let rows = try await environment.pool.query("SELECT count(*) FROM pins")
                #expect(try rows[0].int(0) as Int == 5)

                // Reports: ten at once from one reporter, three get through.
                let pins = try await converseReturning(address) { (author: Conversation) async throws in
                    try await author.register("author")
                    var ids: [String] = []
                    for index in 0 ..< 10 {
                        ids.append(try await author.ok("POST 4 4 r\(index)")["pin"]["id"].string)
                        if index == 4 { _ = try await environment.pool.query("DELETE FROM rate_buckets") }
                    }
                    return ids
                }
                let reporter = try await converseReturning(address) { (client: Conversation) async throws in try await client.register("reporter") }
                let reports = try await withThrowingTaskGroup(of: String.self) { group in
                    for (index, pin) in pins.enumerated() {
                        group.addTask {
                            try await converseReturning(index % 2 == 0 ? address : otherAddress) { (client: Conversation) async throws in
                                _ = try await client.ok("AUTH \(reporter)")
                                return try await client.call("REPORT \(pin) spam")
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(reports.filter { $0.hasPrefix("OK ") }.count == 3, "\(reports)")
                let filed = try await environment.pool.query("SELECT count(*) FROM reports")
                #expect(try filed[0].int(0) as Int == 3)
            }
            await otherHasher.shutdown()
        }
    }
}

/// Checks a `RATE_LIMITED <seconds> <message>` reply: the wait is at most `seconds` and not far
/// below it (a busy test machine may take a while between the requests), and the message says
/// what was limited.
func expectRateLimited(_ reply: String, near seconds: Int, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let words = reply.split(separator: " ", maxSplits: 3)
    let wait = words.count == 4 ? Int(words[2]) ?? -1 : -1
    #expect(words.count == 4 && words[0] == "ERR" && words[1] == "RATE_LIMITED", "\(reply)", sourceLocation: sourceLocation)
    #expect(wait <= seconds && wait >= seconds * 9 / 10, "\(reply)", sourceLocation: sourceLocation)
    #expect(words.count == 4 && words[3].hasPrefix(message) && words[3].hasSuffix("wait \(wait) s"), "\(reply)", sourceLocation: sourceLocation)
}
