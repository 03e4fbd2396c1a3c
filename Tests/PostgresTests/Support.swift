import Foundation
import Postgres
import ScavengerTestSupport
import Synchronization
import Testing

/// Helpers shared by the database tests of this target.
enum Fixture {
    /// A direct connection whose search path is a fresh, empty schema.
    static func connect() throws -> PostgresConnection {
        try PostgresConnection.connect(TestDatabase.isolatedConfiguration())
    }

    /// The test database's URL with another database name.
    static func url(database: String) throws -> String {
        var components = try #require(URLComponents(string: TestDatabase.url()))
        components.path = "/" + database
        return try #require(components.string)
    }

    /// The test database's URL with another port.
    static func url(port: Int) throws -> String {
        var components = try #require(URLComponents(string: TestDatabase.url()))
        components.port = port
        return try #require(components.string)
    }
}

/// A clock that moves only when the test moves it: a pool that reads it keeps a back-off
/// for as long as the test likes, and counts waits exactly.
final class ManualClock: Sendable {
    private let instant = Mutex(ContinuousClock.now)

    var now: ContinuousClock.Instant { instant.withLock { $0 } }

    func advance(by duration: Duration) {
        instant.withLock { $0 += duration }
    }

    /// What a pool reads the time from: this clock, or the real one when nil.
    static func reading(_ clock: ManualClock?) -> @Sendable () -> ContinuousClock.Instant {
        guard let clock else { return { .now } }
        return { clock.now }
    }
}

extension PostgresConnection {
    /// The single value of a one-row, one-column result.
    func scalarInt(_ sql: SQL) throws -> Int {
        let rows = try query(sql)
        #expect(rows.count == 1)
        return try #require(rows.first).int(0)
    }

    func scalarString(_ sql: SQL) throws -> String? {
        let rows = try query(sql)
        #expect(rows.count == 1)
        return try #require(rows.first).string(0)
    }
}
