import Foundation
import Postgres
import ScavengerTestSupport
import Testing

/// Sessions set up to give up on a silent or slow server.
@Suite("PostgreSQL faults", .timeLimit(.minutes(2)))
struct FaultTests {
    @Test("sessions get keepalives, tcp_user_timeout, statement_timeout and lock_timeout, with the options kept")
    func sessionSettings() throws {
        var configuration = try TestDatabase.isolatedConfiguration()
        configuration.commandTimeout = .milliseconds(1500)
        let connection = try PostgresConnection.connect(configuration)
        #expect(try connection.scalarString("SHOW statement_timeout") == "1500ms")
        #expect(try connection.scalarString("SHOW lock_timeout") == "1125ms")
        #expect(try connection.scalarString("SHOW TimeZone") == "UTC")
        // The configuration's own options (the test schema's search path) still apply.
        let options = try #require(configuration.options)
        let schema = try #require(options.split(separator: "=").last)
        #expect(try connection.scalarString("SELECT current_schema()") == String(schema))
        #expect(connection.connectionOption("keepalives") == "1")
        #expect(connection.connectionOption("keepalives_idle") == "15")
        #expect(connection.connectionOption("keepalives_interval") == "5")
        #expect(connection.connectionOption("keepalives_count") == "3")
        #expect(connection.connectionOption("tcp_user_timeout") == "30000")
        // libpq's connect_timeout is never longer than the deadline (rounded up to seconds).
        #expect(connection.connectionOption("connect_timeout") == "2")
        #expect(connection.connectionOption("password") == nil)
    }

    @Test("without a deadline, sessions have no statement_timeout; the URL overrides the keepalive defaults")
    func noDeadlineAndURLOverrides() throws {
        let url = try TestDatabase.url()
        let connection = try PostgresConnection.connect(
            PostgresConfiguration(connectionString: url + (url.contains("?") ? "&" : "?") + "keepalives_idle=7"))
        #expect(try connection.scalarString("SHOW statement_timeout") == "0")
        #expect(connection.connectionOption("keepalives_idle") == "7")
        #expect(connection.connectionOption("connect_timeout") == "5")
    }
}
