import Postgres
import ScavengerTestSupport
import Testing

/// Waits that should end at once are given far longer (`patience`), so that only a hang fails
/// them; waits that must time out are checked for what they returned, not for how long they took.
@Suite("LISTEN / NOTIFY", .timeLimit(.minutes(2)))
struct NotificationTests {
    /// How long a wait for a notification that is on its way may take: a guard against hangs.
    static let patience = 30_000

    @Test func notificationReachesTheListener() throws {
        let listener = try Fixture.connect()
        let sender = try Fixture.connect()
        let channel = TestDatabase.uniqueName("chan")
        try listener.query("LISTEN \(unescaped: channel)")
        try sender.query("NOTIFY \(unescaped: channel), 'payload'")
        let received = try listener.waitForNotifications(timeoutMilliseconds: Self.patience)
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
        let received = try listener.waitForNotifications(timeoutMilliseconds: Self.patience)
        #expect(received.map(\.channel) == [channel])
        #expect(received.map(\.payload) == [payload])
    }

    @Test func nothingSentReturnsEmptyAfterTheTimeout() throws {
        let listener = try Fixture.connect()
        let channel = TestDatabase.uniqueName("chan")
        try listener.query("LISTEN \(unescaped: channel)")
        let start = ContinuousClock.now
        let received = try listener.waitForNotifications(timeoutMilliseconds: 200)
        let elapsed = ContinuousClock.now - start
        #expect(received.isEmpty)
        // It did wait (a floor: a busy machine only makes the wait longer), and came back.
        #expect(elapsed >= .milliseconds(190))
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
        // Nothing more will arrive on the socket: a wait that looked there before draining
        // libpq's queue would sit out its whole timeout (90 s), far past the guard.
        let start = ContinuousClock.now
        let received = try listener.waitForNotifications(timeoutMilliseconds: 90_000)
        #expect(ContinuousClock.now - start < .milliseconds(Self.patience))
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
        let deadline = ContinuousClock.now + .milliseconds(Self.patience)
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
        let deadline = ContinuousClock.now + .milliseconds(Self.patience)
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
