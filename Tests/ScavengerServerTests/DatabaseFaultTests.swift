import Foundation
import Postgres
import ScavengerTestSupport
import Testing

/// What a client sees when the database is cut off (a proxy that stops forwarding) and when it
/// comes back: `ERR UNAVAILABLE` from the daemon's own deadline, never a hang, then normal service.
/// Nothing here is timed: a reply that comes while the partition still stands can only come from
/// the daemon giving up (a blackholed connection never answers), and a hang is caught by the
/// guard. How long the deadline is, is the pool's business (PostgresTests).
///
/// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("Database faults over TCP", .timeLimit(.minutes(10)))
struct DatabaseFaultTests {
    @Test("during a partition every database command answers UNAVAILABLE, WHOAMI included, while the partition lasts; then service resumes")
    func partition() async throws {
        let (proxied, proxy) = try TestDatabase.proxiedConfiguration()
        defer { proxy.stop() }
        var configuration = proxied
        configuration.commandTimeout = .seconds(1)
        configuration.connectTimeoutSeconds = 2
        try await withDatabaseServer(configuration: configuration) { address, _ in
            try await withTimeout(120) {
                try await converse(address) { client in
                    try await client.register("alice")
                    let pin = try await client.ok("POST 1 1 before")["pin"]["id"].string
                    #expect(try await client.ok("WHOAMI")["user"]["name"].string == "alice")

                    proxy.blackhole()
                    for line in ["WHOAMI", "GET \(pin)", "POST 1 1 during", "REPLIES \(pin)", "WHOAMI"] {
                        #expect(try await client.call(line) == "ERR UNAVAILABLE the database is unavailable; retry", "\(line)")
                    }
                    // Commands answered from memory still work.
                    #expect(try await client.call("PING") == #"OK "PONG""#)
                    #expect(try await client.ok("NEARBY 1 1 1000")["pins"].array.count == 1)

                    proxy.resume()
                    // Once the network heals the daemon serves again (after at most a back-off).
                    var whoami = ""
                    try await eventually("WHOAMI answers again") {
                        whoami = try await client.call("WHOAMI")
                        return whoami.hasPrefix("OK ")
                    }
                    #expect(try JSONObject(okLine: whoami)["user"]["name"].string == "alice")
                    #expect(try await client.ok("POST 1 1 after")["pin"]["text"].string == "after")
                }
            }
        }
    }

    @Test("after a restart (every connection cut) the first write succeeds")
    func restart() async throws {
        let (proxied, proxy) = try TestDatabase.proxiedConfiguration()
        defer { proxy.stop() }
        var configuration = proxied
        configuration.commandTimeout = .seconds(2)
        try await withDatabaseServer(configuration: configuration) { address, _ in
            try await withTimeout {
                try await converse(address) { client in
                    try await client.register("bob")
                    let pin = try await client.ok("POST 1 1 before")["pin"]["id"].string
                    proxy.cutAll()
                    try await eventually("every connection through the proxy is closed") { proxy.connectionCount == 0 }
                    #expect(try await client.ok("REPLY \(pin) first")["reply"]["text"].string == "first")
                    #expect(try await client.ok("POST 1 1 second")["pin"]["text"].string == "second")
                    #expect(try await client.ok("WHOAMI")["user"]["name"].string == "bob")
                }
            }
        }
    }
}
