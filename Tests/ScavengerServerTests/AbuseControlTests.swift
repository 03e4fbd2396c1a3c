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

    @Test("LOGINs failing from one address hold it back past the free ones; other addresses are not held back")
    func loginBackoffPerAddress() async throws {
        try await withDatabaseServer(configure: {
            $0.loginThrottle = LoginThrottleRules(addressFreeFailures: 3, accountFreeFailures: 100)
        }) { address, environment in
            try await converse(address) { (owner: Conversation) async throws in try await owner.register("alice") }
            // No race with the 1 s back-off: the hashing threads are held, so the three wrong
            // guesses are all under way (a guess counts from its start) when the next LOGINs come.
            let before = ContinuousClock.now
            try await withHashersHeld(environment.board) { release in
                let guesses = (0 ..< 3).map { _ in
                    Task { try await converseReturning(address, from: "127.0.0.2") { try await $0.call("LOGIN alice wrong-guess1") } }
                }
                try await eventually("the three guesses wait for a hashing thread") { environment.board.passwordQueue.waiting == 3 }
                let held = try await transcript(address, from: "127.0.0.2", "LOGIN alice password1\nLOGIN nobody wrong-guess1\n")
                #expect(held == Array(repeating: "ERR RATE_LIMITED 1 too many failed logins; wait 1 s before trying again", count: 2))
                // Another address is not held back: its LOGIN waits for a thread like any other.
                let owner = Task { try await converseReturning(address, from: "127.0.0.3") { try await $0.call("LOGIN alice password1") } }
                try await eventually("the owner's LOGIN waits for a hashing thread") { environment.board.passwordQueue.waiting == 4 }
                release()
                for guess in guesses { #expect(try await guess.value == "ERR UNAUTHORIZED wrong name or password") }
                #expect(try await owner.value.hasPrefix("OK "))
            }
            // The three failures are on record against that address alone, and it backs off: the
            // lock the third armed when it was checked (after `before`) runs past `before`.
            let throttle = environment.board.loginThrottle
            #expect(throws: BoardError.self) { try throttle.checkAddress("127.0.0.2", now: before) }
            #expect(!throttle.isClean("127.0.0.2"))
            #expect(throttle.isClean("127.0.0.3"))
        }
    }

    @Test("a locked account still lets its owner in from an address that has not been failing")
    func accountLockSparesCleanAddresses() async throws {
        try await withDatabaseServer(configure: {
            $0.loginThrottle = LoginThrottleRules(addressFreeFailures: 100, accountFreeFailures: 2)
        }) { address, environment in
            try await converse(address) { (owner: Conversation) async throws in try await owner.register("alice") }
            // As above, the guesses are held under way instead of racing the 1 s back-off.
            try await withHashersHeld(environment.board) { release in
                let guesses = (0 ..< 2).map { _ in
                    Task { try await converseReturning(address, from: "127.0.0.2") { try await $0.call("LOGIN alice wrong-guess1") } }
                }
                try await eventually("both guesses wait for a hashing thread") { environment.board.passwordQueue.waiting == 2 }
                // The account is locked for this address (by name or email); other accounts are not.
                #expect(try await transcript(address, from: "127.0.0.2", "LOGIN ALICE@example.org wrong-guess2\n")
                    == ["ERR RATE_LIMITED 1 too many failed logins; wait 1 s before trying again"])
                let otherAccount = Task {
                    try await converseReturning(address, from: "127.0.0.2") { try await $0.call("LOGIN bob wrong-guess1") }
                }
                // Its owner, from a clean address, is not held back.
                let owner = Task { try await converseReturning(address, from: "127.0.0.4") { try await $0.call("LOGIN alice password1") } }
                try await eventually("every check waits for a hashing thread") { environment.board.passwordQueue.waiting == 4 }
                release()
                for guess in guesses { #expect(try await guess.value == "ERR UNAUTHORIZED wrong name or password") }
                #expect(try await otherAccount.value == "ERR UNAUTHORIZED wrong name or password")
                #expect(try await owner.value.hasPrefix("OK "))
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
        try await TestEnvironment.make().use { environment in
            // REGISTER waits for a hashing thread until they are released.
            try await withHashersHeld(environment.board) { release in
                try await withServer(ServerConfiguration(lineTimeoutSeconds: 1), board: environment.board) { address, _ in
                    try await withTimeout {
                        try await TestConnection.talk(address) { writer, reader in
                            try await writer.send("REGISTER bob bob@example.org password1\nPI")
                            // Long enough for the unfinished line's deadline to pass while REGISTER
                            // still waits. (Should a loaded machine fire it only after REGISTER's
                            // reply, the transcript is the same: this wait cannot fail the test.)
                            try await Task.sleep(for: .milliseconds(2500))
                            release()
                            #expect(try await reader.next()?.hasPrefix("OK ") == true)
                            #expect(try await reader.next() == "ERR BAD_REQUEST request line not finished within 1 s; closing")
                            #expect(try await reader.next() == nil)
                        }
                    }
                }
            }
        }
    }

    @Test("REGISTER checks the name is free before hashing, and a full hashing queue answers UNAVAILABLE")
    func hashingQueueIsBounded() async throws {
        try await withDatabaseServer(configure: { $0.passwordQueueLength = 0 }) { address, environment in
            try await converse(address) { (client: Conversation) async throws in try await client.register("alice") }
            // Every hashing thread busy.
            try await withHashersHeld(environment.board) { _ in
                try await converse(address) { (client: Conversation) async throws in
                    #expect(try await client.call("REGISTER ALICE other@example.org password1") == "ERR CONFLICT that username is taken")
                    #expect(try await client.call("REGISTER bob alice@EXAMPLE.org password1") == "ERR CONFLICT that email is already registered")
                    #expect(try await client.call("REGISTER bob bob@example.org password1")
                        == "ERR UNAVAILABLE the server is busy checking passwords; retry in a moment")
                    #expect(try await client.call("LOGIN alice password1")
                        == "ERR UNAVAILABLE the server is busy checking passwords; retry in a moment")
                }
            }
            // Nothing was half done, and nothing was counted as a failed login.
            try await converse(address) { (client: Conversation) async throws in
                #expect(try await client.call("LOGIN alice password1").hasPrefix("OK "))
                try await client.register("bob")
            }
        }
    }

    @Test("during a storm of wrong-password LOGINs a real user's LOGIN is checked ahead of the storm's waiting checks")
    func realLoginDuringAStorm() async throws {
        // One hashing thread, and the storm's address is never held back: only the queue's lanes
        // can put the real LOGIN first. Nothing is timed: the thread is held while the queue
        // fills, and what is compared is which checks ran before the real one.
        try await withDatabaseServer(hashingThreads: 1, configure: {
            $0.loginThrottle = LoginThrottleRules(addressFreeFailures: 1_000_000, accountFreeFailures: 1_000_000)
        }) { address, environment in
            let queue = environment.board.passwordQueue
            try await converse(address) { (owner: Conversation) async throws in try await owner.register("alice") }
            let stormChecked = Counter()
            try await withThrowingTaskGroup(of: Void.self) { attackers in
                try await withHashersHeld(environment.board) { release in
                    // One command at a time per connection: 24 connections keep 24 checks waiting.
                    for _ in 0 ..< 24 {
                        attackers.addTask {
                            try? await TestConnection.talk(address, from: "127.0.0.2") { writer, reader in
                                while !Task.isCancelled {
                                    try await writer.send("LOGIN alice wrong-password1\n")
                                    let line = try await reader.next() ?? ""
                                    #expect(line.hasPrefix("ERR UNAUTHORIZED") || line.hasPrefix("ERR UNAVAILABLE") || line.isEmpty)
                                    if line.hasPrefix("ERR UNAUTHORIZED") { stormChecked.add() }
                                }
                            }
                        }
                    }
                    try await eventually("the storm's 24 checks wait") { queue.waiting == 24 }
                    // The real user, from an address with no failures; then, in the same lane
                    // behind it, a probe that keeps the thread once its turn comes.
                    let real = Task { try await converseReturning(address) { try await $0.call("LOGIN alice password1") } }
                    try await eventually("the real LOGIN waits too") { queue.waiting == 25 }
                    let probe = Gate()
                    let probing = Task { try await queue.run(first: true, isWanted: { true }) { _ in await probe.wait() } }
                    try await eventually("the probe waits behind it") { queue.waiting == 26 }
                    release()
                    #expect(try await real.value.hasPrefix("OK "))
                    // The probe holds the thread now: at most the storm's first check (which found
                    // the address still clean, so it queued in the first lane too) ran before the
                    // real one, and the rest still wait. In arrival order all 24 would have run.
                    #expect(stormChecked.value <= 1)
                    #expect(queue.waiting >= 23)
                    probe.open()
                    try await probing.value
                }
                // The storm's connections close; what they left in the queue is dropped, not hashed.
                attackers.cancelAll()
                try await attackers.waitForAll()
            }
            try await eventually("the hashing queue is idle") { queue.waiting == 0 && queue.running == 0 }
        }
    }

    @Test("each user's POSTs, POSTPHOTOs and REPLYs have their own buckets; staff get more; nothing over the rate is written")
    func perUserWriteRates() async throws {
        try await withDatabaseServer(configure: {
            $0.writeRates = WriteRates(
                post: RateLimit(count: 2, seconds: 3600), photo: RateLimit(count: 1, seconds: 3600),
                reply: RateLimit(count: 1, seconds: 7200), report: nil, staffFactor: 3)
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
                expectRateLimited(try await alice.call("REPLY \(first) again"), near: 7200, "too many REPLY requests")
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
            let other = environment.secondDaemon()
            try await other.feed.load()
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
            await other.passwords.shutdown()
        }
    }
}

/// Checks a `RATE_LIMITED <seconds> <message>` reply: the wait is at most `seconds` and not far
/// below it, and the message says what was limited. The tests' periods are long (30 minutes and
/// more), so that the tenth allowed for the time between the requests is minutes: a hang, never
/// a slow machine.
func expectRateLimited(_ reply: String, near seconds: Int, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let words = reply.split(separator: " ", maxSplits: 3)
    let wait = words.count == 4 ? Int(words[2]) ?? -1 : -1
    #expect(words.count == 4 && words[0] == "ERR" && words[1] == "RATE_LIMITED", "\(reply)", sourceLocation: sourceLocation)
    #expect(wait <= seconds && wait >= seconds * 9 / 10, "\(reply)", sourceLocation: sourceLocation)
    #expect(words.count == 4 && words[3].hasPrefix(message) && words[3].hasSuffix("wait \(wait) s"), "\(reply)", sourceLocation: sourceLocation)
}

/// Holds every hashing thread of `board` for `body`, which gets what lets them go (they are let
/// go anyway when `body` ends): password checks meanwhile wait in the queue, so a test sees them
/// under way, in the state it chose, however fast or slow the machine is.
func withHashersHeld<T>(_ board: Board, _ body: (_ release: @escaping @Sendable () -> Void) async throws -> T) async throws -> T {
    let gate = Gate()
    let holders = (0 ..< board.passwords.threads).map { _ in
        Task { try await board.passwordQueue.run(first: true, isWanted: { true }) { _ in await gate.wait() } }
    }
    let value: T
    do {
        try await eventually("every hashing thread is held") { board.passwordQueue.running == board.passwords.threads }
        value = try await body { gate.open() }
    } catch {
        gate.open()
        for holder in holders { _ = try? await holder.value }
        throw error
    }
    gate.open()
    for holder in holders { try await holder.value }
    return value
}

/// A count many tasks add to.
final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func add() { count.withLock { $0 += 1 } }
}
