import Foundation
import Postgres
import ScavengerTestSupport
import Testing

/// What a client sees when the database is cut off (a proxy that stops forwarding) and when it
/// comes back: `ERR UNAVAILABLE` within the configured time, never a hang, then normal service.
@Suite("Database faults over TCP", .timeLimit(.minutes(2)))
struct DatabaseFaultTests {
    @Test("during a partition every database command answers UNAVAILABLE within the timeout, WHOAMI included; then service resumes")
    func partition() async throws {
        let (proxied, proxy) = try TestDatabase.proxiedConfiguration()
        defer { proxy.stop() }
        var configuration = proxied
        configuration.commandTimeout = .seconds(1)
        configuration.connectTimeoutSeconds = 2
        try await withDatabaseServer(configuration: configuration) { address, _ in
            try await withTimeout(60) {
                // Timed on a thread of its own (see BlockingLineClient).
                let client = try BlockingLineClient(port: try #require(address.port))
                _ = try await client.ok("REGISTER alice alice@example.org password1")
                let pin = try await client.ok("POST 1 1 before")["pin"]["id"].string
                #expect(try await client.ok("WHOAMI")["user"]["name"].string == "alice")

                proxy.blackhole()
                for line in ["WHOAMI", "GET \(pin)", "POST 1 1 during", "REPLIES \(pin)", "WHOAMI"] {
                    let (reply, elapsed) = try await client.call(line)
                    #expect(reply == "ERR UNAVAILABLE the database is unavailable; retry", "\(line)")
                    #expect(elapsed < .seconds(3), "\(line)")
                }
                // Commands answered from memory still work.
                #expect(try await client.call("PING").reply == #"OK "PONG""#)
                #expect(try await client.ok("NEARBY 1 1 1000")["pins"].array.count == 1)

                proxy.resume()
                // Once the network heals the daemon serves again (after at most a back-off).
                var whoami = ""
                let deadline = ContinuousClock.now + .seconds(10)
                repeat {
                    whoami = try await client.call("WHOAMI").reply
                    if whoami.hasPrefix("OK ") { break }
                    try await Task.sleep(for: .milliseconds(100))
                } while ContinuousClock.now < deadline
                #expect(try JSONObject(okLine: whoami)["user"]["name"].string == "alice")
                #expect(try await client.ok("POST 1 1 after")["pin"]["text"].string == "after")
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
            try await withTimeout(60) {
                try await converse(address) { client in
                    try await client.register("bob")
                    let pin = try await client.ok("POST 1 1 before")["pin"]["id"].string
                    proxy.cutAll()
                    let deadline = ContinuousClock.now + .seconds(5)
                    while proxy.connectionCount > 0, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    #expect(try await client.ok("REPLY \(pin) first")["reply"]["text"].string == "first")
                    #expect(try await client.ok("POST 1 1 second")["pin"]["text"].string == "second")
                    #expect(try await client.ok("WHOAMI")["user"]["name"].string == "bob")
                }
            }
        }
    }
}
