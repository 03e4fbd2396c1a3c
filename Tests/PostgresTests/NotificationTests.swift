import Postgres
import ScavengerTestSupport
import Testing

@Suite("LISTEN / NOTIFY", .timeLimit(.minutes(2)))
struct NotificationTests {
    @Test func notificationReachesTheListener() throws {
        let listener = try Fixture.connect()
        let sender = try Fixture.connect()
        let channel = TestDatabase.uniqueName("chan")
        try listener.query("LISTEN \(unescaped: channel)")
        try sender.query("NOTIFY \(unescaped: channel), 'payload'")
        let received = try listener.waitForNotifications(timeoutMilliseconds: 5000)
        #expect(received.map(\.channel) == [channel])
        #expect(received.map(\.payload) == ["payload"])
        #expect(try listener.drainNotifications().isEmpty)
    }

    @Test func boundPayloadArrivesIntact() throws {
        let listener = try Fixture.connect()
        let sender = try Fixture.connect()
        let channel = TestDatabase.uniqueName("chan")
        let payload = "it's \"quoted\", 😀, \\ and '); DROP TABLE x; --"
        try listener.query("LISTEN \(unescaped: channel)")
        try sender.query("SELECT pg_notify(\(channel), \(payload))")
        let received = try listener.waitForNotifications(timeoutMilliseconds: 5000)
        #expect(received.map(\.channel) == [channel])
        #expect(received.map(\.payload) == [payload])
    }

    @Test func nothingSentReturnsEmptyAfterTheTimeout() throws {
        let listener = try Fixture.connect()
        let channel = TestDatabase.uniqueName("chan")
        try listener.query("LISTEN \(unescaped: channel)")
        let clock = ContinuousClock()
        let start = clock.now
        let received = try listener.waitForNotifications(timeoutMilliseconds: 200)
        let elapsed = clock.now - start
        #expect(received.isEmpty)
        #expect(elapsed >= .milliseconds(190))
        #expect(elapsed < .seconds(3))
        #expect(listener.isHealthy)
    }

    @Test func queuedNotificationsAreReturnedWithoutWaiting() throws {
        let listener = try Fixture.connect()
        let sender = try Fixture.connect()
        let channel = TestDatabase.uniqueName("chan")
        try listener.query("LISTEN \(unescaped: channel)")
        try sender.query("SELECT pg_notify(\(channel), \("one"))")
        try sender.query("SELECT pg_notify(\(channel), \("two"))")
        // A query on the listener reads the notifications into libpq's queue.
        try listener.query("SELECT pg_sleep(0.1)")
        let clock = ContinuousClock()
        let start = clock.now
        let received = try listener.waitForNotifications(timeoutMilliseconds: 5000)
        #expect(clock.now - start < .seconds(2))
        #expect(received.map(\.payload) == ["one", "two"])
    }

    @Test func onlyCommittedNotificationsAreDelivered() throws {
        let listener = try Fixture.connect()
        let sender = try Fixture.connect()
        let channel = TestDatabase.uniqueName("chan")
        try listener.query("LISTEN \(unescaped: channel)")
        try sender.query("BEGIN")
        try sender.query("SELECT pg_notify(\(channel), \("late"))")
        #expect(try listener.waitForNotifications(timeoutMilliseconds: 150).isEmpty)
        try sender.query("COMMIT")
        var received: [PostgresNotification] = []
        let deadline = ContinuousClock.now + .seconds(5)
        while received.isEmpty, ContinuousClock.now < deadline {
            received += try listener.waitForNotifications(timeoutMilliseconds: 500)
        }
        #expect(received.map(\.payload) == ["late"])
    }

    @Test func otherChannelsAreNotReceived() throws {
        let listener = try Fixture.connect()
        let sender = try Fixture.connect()
        let channel = TestDatabase.uniqueName("chan")
        let other = TestDatabase.uniqueName("chan")
        try listener.query("LISTEN \(unescaped: channel)")
        try sender.query("SELECT pg_notify(\(other), \("elsewhere"))")
        try sender.query("SELECT pg_notify(\(channel), \("here"))")
        var received: [PostgresNotification] = []
        let deadline = ContinuousClock.now + .seconds(5)
        while received.isEmpty, ContinuousClock.now < deadline {
            received += try listener.waitForNotifications(timeoutMilliseconds: 500)
        }
        #expect(received.map(\.channel) == [channel])
        #expect(received.map(\.payload) == ["here"])
    }

    @Test func unlistenStopsDelivery() throws {
        let listener = try Fixture.connect()
        let sender = try Fixture.connect()
        let channel = TestDatabase.uniqueName("chan")
        try listener.query("LISTEN \(unescaped: channel)")
        try listener.query("UNLISTEN \(unescaped: channel)")
        try sender.query("SELECT pg_notify(\(channel), \("ignored"))")
        #expect(try listener.waitForNotifications(timeoutMilliseconds: 200).isEmpty)
    }

    @Test func waitingOnABrokenConnectionThrows() throws {
        let listener = try Fixture.connect()
        let admin = try Fixture.connect()
        try listener.query("LISTEN \(unescaped: TestDatabase.uniqueName("chan"))")
        try admin.query("SELECT pg_terminate_backend(\(listener.backendPID), 5000)")
        let error = #expect(throws: PostgresError.self) {
            // Readable at once (the server's goodbye, then end of file).
            for _ in 0 ..< 10 {
                _ = try listener.waitForNotifications(timeoutMilliseconds: 500)
            }
        }
        #expect(error?.code == .connectionFailure)
        #expect(!listener.isHealthy)
    }
}
