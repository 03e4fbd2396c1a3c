import NIOCore
import ProxyHeaders
import ScavengerBoard
import ScavengerCore
import ScavengerServer
import ScavengerTestSupport
import Testing

/// `--trusted-proxies` on the line port: a trusted proxy's PROXY header (v1 or v2) names the
/// client every per-address limit counts; from anyone else the same bytes are not believed.
/// The test clients connect from 127.0.0.1 (the trusted proxy) or other loopback addresses.
@Suite("PROXY protocol headers from trusted proxies on the line port")
struct ProxyProtocolTests {
    static let trusted = try! TrustedProxies(parsing: "127.0.0.1/32")

    /// One header of each kind naming `client` (IPv4 `198.51.100.N` or IPv6 `2001:db8::N`).
    enum Kind: String, CaseIterable, Sendable {
        case v1, v1IPv6, v2, v2IPv6

        func header(client number: Int) -> [UInt8] {
            let n = UInt8(number)
            let ports: [UInt8] = [0x9C, 0x40, 0x1D, 0x2B]
            switch self {
            case .v1: return Array("PROXY TCP4 198.51.100.\(number) 127.0.0.1 40000 7467\r\n".utf8)
            case .v1IPv6: return Array("PROXY TCP6 2001:db8:\(number)::1 ::1 40000 7467\r\n".utf8)
            case .v2:
                let addresses: [UInt8] = [198, 51, 100, n, 127, 0, 0, 1]
                return ProxyHeader.v2Signature + [0x21, 0x11, 0, 12] + addresses + ports
            case .v2IPv6:
                var source = [UInt8](repeating: 0, count: 16)
                source[0 ..< 6] = [0x20, 0x01, 0x0D, 0xB8, 0, n]
                source[15] = 1
                var destination = [UInt8](repeating: 0, count: 16)
                destination[15] = 1
                return ProxyHeader.v2Signature + [0x21, 0x21, 0, 36] + source + destination + ports
            }
        }
    }

    /// Sends `header` then `lines` on a new connection from `source`, half-closes, and returns
    /// every reply line.
    func exchange(_ address: SocketAddress, from source: String? = nil, header: [UInt8], _ lines: String) async throws -> [String] {
        try await TestConnection.talk(address, from: source) { writer, reader in
            try await writer.send(bytes: header + Array(lines.utf8))
            writer.finish()
            return try await reader.rest()
        }
    }

    @Test("two connections naming different clients count under separate addresses; a third naming the first is refused", arguments: Kind.allCases)
    func separateLimits(kind: Kind) async throws {
        let configuration = ServerConfiguration(maxConnectionsPerAddress: 1, trustedProxies: Self.trusted)
        try await withServer(configuration) { address, _ in
            try await withTimeout(90) {
                try await TestConnection.talk(address) { first, firstReader in
                    try await first.send(bytes: kind.header(client: 1) + Array("PING\r\n".utf8))
                    #expect(try await firstReader.next() == #"OK "PONG""#)
                    // The same proxy, another client: a place of its own.
                    try await TestConnection.talk(address) { second, secondReader in
                        try await second.send(bytes: kind.header(client: 2) + Array("PING\n".utf8))
                        #expect(try await secondReader.next() == #"OK "PONG""#)
                        // The first client again: its one place is taken.
                        let refused = try await exchange(address, header: kind.header(client: 1), "PING\n")
                        #expect(refused.count == 1)
                        #expect(refused.first?.hasPrefix("ERR UNAVAILABLE too many connections from your address") == true, "\(refused)")
                    }
                }
            }
        }
    }

    @Test("from an untrusted address a header is not believed: a v1 line is an unknown command, and the limit is shared", arguments: [
        // A daemon that trusts no one; one that trusts another address.
        (TrustedProxies.none, "127.0.0.1"), (ProxyProtocolTests.trusted, "127.0.0.2"),
    ])
    func untrustedSpoof(trusted: TrustedProxies, source: String) async throws {
        let configuration = ServerConfiguration(maxConnectionsPerAddress: 1, trustedProxies: trusted)
        try await withServer(configuration) { address, _ in
            try await withTimeout(90) {
                try await TestConnection.talk(address, from: source) { first, firstReader in
                    try await first.send(bytes: Kind.v1.header(client: 1) + Array("PING\n".utf8))
                    let unknown = try await firstReader.next() ?? "closed"
                    #expect(unknown.hasPrefix("ERR UNKNOWN_COMMAND ") && unknown.contains("PROXY"), "\(unknown)")
                    #expect(try await firstReader.next() == #"OK "PONG""#)
                    // Naming another client changes nothing: the address is the connection's own.
                    for kind in [Kind.v1, .v1IPv6] {
                        let refused = try await exchange(address, from: source, header: kind.header(client: 2), "PING\n")
                        #expect(refused.count == 1)
                        #expect(refused.first?.hasPrefix("ERR UNAVAILABLE too many connections from your address") == true, "\(refused)")
                    }
                }
            }
        }
    }

    @Test("a v2 header from an untrusted address is bytes like any other: its QUIT line ends the connection, nothing breaks")
    func untrustedBinary() async throws {
        try await withServer(ServerConfiguration(maxConnectionsPerAddress: 1)) { address, _ in
            try await withTimeout(90) {
                let replies = try await exchange(address, header: Kind.v2.header(client: 1), "PING\n")
                #expect(replies.last?.contains("BYE") == true, "\(replies)")
                #expect(!replies.contains(#"OK "PONG""#), "\(replies)")
                // The server still serves.
                #expect(try await transcript(address, "PING\n") == [#"OK "PONG""#])
            }
        }
    }

    @Test("a trusted connection that sends no header keeps its own address")
    func trustedWithoutHeader() async throws {
        let configuration = ServerConfiguration(maxConnectionsPerAddress: 1, trustedProxies: Self.trusted)
        try await withServer(configuration) { address, _ in
            try await withTimeout(90) {
                try await TestConnection.talk(address) { first, firstReader in
                    try await first.send("PING\n")
                    #expect(try await firstReader.next() == #"OK "PONG""#)
                    let refused = try await transcript(address, "PING\n")
                    #expect(refused.count == 1)
                    #expect(refused.first?.hasPrefix("ERR UNAVAILABLE too many connections from your address") == true, "\(refused)")
                    // A header naming another client still gets its own place.
                    #expect(try await exchange(address, header: Kind.v1.header(client: 9), "PING\n") == [#"OK "PONG""#])
                }
            }
        }
    }

    @Test("a trusted connection with a malformed header is closed without a reply", arguments: [
        Array("PROXY TCP4 198.51.100.1 127.0.0.1 1\r\nPING\n".utf8),
        Array("PROXY TCP4 example.org 127.0.0.1 1 2\r\nPING\n".utf8),
        Array(("PROXY UNKNOWN " + String(repeating: "x", count: 120) + "\r\nPING\n").utf8),
        ProxyHeader.v2Signature + [0x21, 0x11, 0xFF, 0xFF] + Array("PING\n".utf8),
        ProxyHeader.v2Signature + [0x31, 0x11, 0, 0] + Array("PING\n".utf8),
    ])
    func malformed(bytes: [UInt8]) async throws {
        try await withServer(ServerConfiguration(trustedProxies: Self.trusted)) { address, _ in
            try await withTimeout(90) {
                let replies = try await exchange(address, header: bytes, "")
                #expect(replies == [])
                let after = try await transcript(address, "PING\n")
                #expect(after == [#"OK "PONG""#])
            }
        }
    }

    @Test("UNKNOWN and LOCAL headers keep the connection's own address", arguments: [
        Array("PROXY UNKNOWN\r\n".utf8), ProxyHeader.v2Signature + [0x20, 0x00, 0, 0],
    ])
    func unknownKeepsOwn(header: [UInt8]) async throws {
        let configuration = ServerConfiguration(maxConnectionsPerAddress: 1, trustedProxies: Self.trusted)
        try await withServer(configuration) { address, _ in
            try await withTimeout(90) {
                try await TestConnection.talk(address) { first, firstReader in
                    try await first.send(bytes: header + Array("PING\n".utf8))
                    #expect(try await firstReader.next() == #"OK "PONG""#)
                    let refused = try await exchange(address, header: header, "PING\n")
                    #expect(refused.first?.hasPrefix("ERR UNAVAILABLE too many connections from your address") == true, "\(refused)")
                }
            }
        }
    }

    @Test("with PostgreSQL: REGISTER's per-address bucket is the named client's from a trusted proxy, the connection's own otherwise")
    func registrationBuckets() async throws {
        try await TestEnvironment.make(configure: { $0.registrationRate = RateLimit(count: 1, seconds: 3600) }).use { environment in
            let configuration = ServerConfiguration(trustedProxies: Self.trusted)
            try await withServer(configuration, board: environment.board) { address, _ in
                try await withTimeout(90) {
                    let register = { (name: String) in "REGISTER \(name) \(name)@example.org password1\n" }
                    // Through the trusted proxy: one registration for each named client.
                    let first = try await exchange(address, header: Kind.v1.header(client: 41), register("first") + register("again"))
                    #expect(first.count == 2)
                    #expect(first.first?.hasPrefix("OK ") == true, "\(first)")
                    #expect(first.last?.hasPrefix("ERR RATE_LIMITED ") == true, "\(first)")
                    let second = try await exchange(address, header: Kind.v2.header(client: 42), register("second"))
                    #expect(second.first?.hasPrefix("OK ") == true, "\(second)")
                    // From an untrusted address, naming new clients each time: one bucket all the same.
                    let spoofed = try await exchange(
                        address, from: "127.0.0.91", header: Kind.v1.header(client: 43), register("third"))
                    #expect(spoofed.count == 2)
                    #expect(spoofed.last?.hasPrefix("OK ") == true, "\(spoofed)")
                    let again = try await exchange(
                        address, from: "127.0.0.91", header: Kind.v1.header(client: 44), register("fourth"))
                    #expect(again.last?.hasPrefix("ERR RATE_LIMITED ") == true, "\(again)")
                    let rows = try await environment.pool.query("SELECT count(*) FROM users")
                    #expect(try rows[0].int(0) as Int == 3)
                }
            }
        }
    }
}
