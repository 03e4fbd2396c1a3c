import ProxyHeaders
import Testing

/// A v2 header: the signature, version 2 with `command`, `family`/`transport`, then `body`.
func v2(command: UInt8 = 1, family: UInt8 = 1, transport: UInt8 = 1, body: [UInt8], length: Int? = nil) -> [UInt8] {
    let count = length ?? body.count
    return ProxyHeader.v2Signature + [0x20 | command, family << 4 | transport, UInt8(count >> 8), UInt8(count & 0xFF)] + body
}

/// An IPv4 v2 body: source, destination, ports.
let v4Body: [UInt8] = [198, 51, 100, 7, 127, 0, 0, 1, 0x30, 0x39, 0x1C, 0xEB]
/// An IPv6 v2 body: 2001:db8::7 to ::1, ports.
let v6Body: [UInt8] = [0x20, 0x01, 0x0D, 0xB8] + Array(repeating: 0, count: 11) + [7]
    + Array(repeating: 0, count: 15) + [1] + [0x30, 0x39, 0x1C, 0xEB]

@Suite("The PROXY protocol header, v1 and v2")
struct ProxyHeaderTests {
    struct Good: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        let client: String?
        let length: Int
        var testDescription: String { name }
    }

    static let good: [Good] = [
        Good(name: "v1 TCP4", bytes: Array("PROXY TCP4 198.51.100.7 127.0.0.1 56324 7467\r\nPING\r\n".utf8),
             client: "198.51.100.7", length: 46),
        Good(name: "v1 TCP6", bytes: Array("PROXY TCP6 2001:db8::7 ::1 56324 7467\r\n".utf8), client: "2001:db8::7", length: 39),
        Good(name: "v1 TCP6 mapped IPv4", bytes: Array("PROXY TCP6 ::ffff:198.51.100.7 ::1 1 2\r\n".utf8),
             client: "198.51.100.7", length: 40),
        Good(name: "v1 UNKNOWN", bytes: Array("PROXY UNKNOWN\r\n".utf8), client: nil, length: 15),
        Good(name: "v1 UNKNOWN with addresses", bytes: Array("PROXY UNKNOWN ffff::1 ::1 1 2\r\nPING\r\n".utf8), client: nil, length: 31),
        Good(name: "v1 of 107 bytes", bytes: Array(("PROXY UNKNOWN " + String(repeating: "x", count: 91) + "\r\n").utf8),
             client: nil, length: 107),
        Good(name: "v2 PROXY IPv4", bytes: v2(body: v4Body) + Array("PING\n".utf8), client: "198.51.100.7", length: 28),
        Good(name: "v2 PROXY IPv6", bytes: v2(family: 2, body: v6Body), client: "2001:db8::7", length: 52),
        Good(name: "v2 PROXY IPv4 with TLVs skipped", bytes: v2(body: v4Body + [0x04, 0x00, 0x02, 0xAA, 0xBB]),
             client: "198.51.100.7", length: 33),
        Good(name: "v2 LOCAL", bytes: v2(command: 0, family: 0, transport: 0, body: []), client: nil, length: 16),
        Good(name: "v2 LOCAL with addresses", bytes: v2(command: 0, body: v4Body), client: nil, length: 28),
        Good(name: "v2 PROXY UNSPEC", bytes: v2(family: 0, transport: 0, body: []), client: nil, length: 16),
        Good(name: "v2 PROXY over UDP", bytes: v2(transport: 2, body: v4Body), client: nil, length: 28),
        Good(name: "v2 PROXY AF_UNIX", bytes: v2(family: 3, body: Array(repeating: 0, count: 216)), client: nil, length: 232),
        Good(name: "v2 of the largest length", bytes: v2(body: v4Body + Array(repeating: 0, count: 2048 - 12)),
             client: "198.51.100.7", length: 16 + 2048),
    ]

    @Test("a good header names its client (or none) and its length", arguments: good)
    func goodHeader(_ example: Good) {
        #expect(ProxyHeader.parse(example.bytes) == .header(client: example.client.flatMap { IPAddress($0) }, length: example.length))
    }

    @Test("every proper prefix of a good header asks for more bytes", arguments: good)
    func prefixes(_ example: Good) {
        for count in 0 ..< example.length {
            #expect(ProxyHeader.parse(example.bytes.prefix(count)) == .incomplete, "\(count) bytes")
        }
    }

    static let bad: [(String, [UInt8])] = [
        ("v1 without CR", Array("PROXY TCP4 198.51.100.7 127.0.0.1 1 2\n".utf8)),
        ("v1 of 108 bytes", Array(("PROXY UNKNOWN " + String(repeating: "x", count: 92) + "\r\n").utf8)),
        ("v1 longer than 107 bytes with no end", Array(("PROXY TCP4 " + String(repeating: "1", count: 200)).utf8)),
        ("v1 unknown protocol", Array("PROXY UDP4 198.51.100.7 127.0.0.1 1 2\r\n".utf8)),
        ("v1 lower-case protocol", Array("PROXY tcp4 198.51.100.7 127.0.0.1 1 2\r\n".utf8)),
        ("v1 TCP4 with IPv6", Array("PROXY TCP4 2001:db8::7 ::1 1 2\r\n".utf8)),
        ("v1 TCP6 with IPv4", Array("PROXY TCP6 198.51.100.7 127.0.0.1 1 2\r\n".utf8)),
        ("v1 bad address", Array("PROXY TCP4 198.51.100.777 127.0.0.1 1 2\r\n".utf8)),
        ("v1 host name", Array("PROXY TCP4 example.org 127.0.0.1 1 2\r\n".utf8)),
        ("v1 port too large", Array("PROXY TCP4 198.51.100.7 127.0.0.1 65536 2\r\n".utf8)),
        ("v1 port with a leading zero", Array("PROXY TCP4 198.51.100.7 127.0.0.1 01 2\r\n".utf8)),
        ("v1 missing a port", Array("PROXY TCP4 198.51.100.7 127.0.0.1 1\r\n".utf8)),
        ("v1 double space", Array("PROXY TCP4  198.51.100.7 127.0.0.1 1 2\r\n".utf8)),
        ("v1 extra field", Array("PROXY TCP4 198.51.100.7 127.0.0.1 1 2 3\r\n".utf8)),
        ("v1 nothing after PROXY", Array("PROXY \r\n".utf8)),
        ("v1 control byte", Array("PROXY TCP4 198.51.100.7\t127.0.0.1 1 2\r\n".utf8)),
        ("v2 version 1", Array(v2(body: v4Body).enumerated().map { $0.offset == 12 ? 0x11 : $0.element })),
        ("v2 command 2", v2(command: 2, body: v4Body)),
        ("v2 family 4", v2(family: 4, body: v4Body)),
        ("v2 transport 3", v2(transport: 3, body: v4Body)),
        ("v2 IPv4 too short", v2(body: Array(v4Body.prefix(11)))),
        ("v2 IPv6 too short", v2(family: 2, body: Array(v6Body.prefix(35)))),
        ("v2 length over the bound", v2(body: v4Body, length: 2049)),
        ("v2 length 65535", v2(body: v4Body, length: 65535)),
    ]

    @Test("a malformed or oversized header is invalid", arguments: bad)
    func badHeader(_ name: String, _ bytes: [UInt8]) {
        guard case .invalid = ProxyHeader.parse(bytes) else {
            Issue.record("\(name): \(ProxyHeader.parse(bytes))")
            return
        }
    }

    @Test("bytes that do not begin a header are none: the protocol's own", arguments: [
        "PING\r\n", "PROXYTCP4 1.2.3.4\r\n", "PROX\n", "proxy TCP4 198.51.100.7 127.0.0.1 1 2\r\n", "\r\n\r\nQUIT\n", "Q",
    ])
    func notAHeader(_ text: String) {
        #expect(ProxyHeader.parse(Array(text.utf8)) == .none)
    }
}

@Suite("Addresses, networks and the trusted proxies")
struct TrustedProxiesTests {
    @Test("addresses are read strictly and written in the usual form", arguments: [
        ("203.0.113.7", "203.0.113.7"), ("2001:DB8::1", "2001:db8::1"), ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        ("::", "::"), ("::1", "::1"), ("1::", "1::"), ("::ffff:203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2:3:4:5:6"), ("fe80::1%eth0", "fe80::1"), ("0:0:1:0:0:0:1:0", "0:0:1::1:0"),
    ])
    func addresses(_ text: String, _ written: String) {
        #expect(IPAddress(text)?.description == written)
    }

    @Test("what is not an address is nil", arguments: [
        "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.-4", "example.org", ":::", "1:2:3:4:5:6:7:8:9",
        "2001:db8::1::2", "12345::", "g::1", "[::1]", "1.2.3.4:80",
    ])
    func notAddresses(_ text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test("networks match the addresses they hold, a bare address only itself")
    func networks() throws {
        let trusted = try TrustedProxies(parsing: "10.0.0.0/8, 192.0.2.1,2001:db8::/32 ,::ffff:198.51.100.0/120")
        for inside in ["10.1.2.3", "10.255.255.255", "192.0.2.1", "2001:db8:ffff::9", "::ffff:10.0.0.1", "198.51.100.200"] {
            #expect(trusted.contains(inside), "\(inside)")
        }
        for outside in ["11.0.0.1", "192.0.2.2", "2001:db9::1", "::ffff:11.0.0.1", "::1", "127.0.0.1", "nope"] {
            #expect(!trusted.contains(outside), "\(outside)")
        }
        #expect(!trusted.contains(nil as String?))
        let everyIPv4 = try TrustedProxies(parsing: "0.0.0.0/0")
        #expect(everyIPv4.contains("203.0.113.9"))
        #expect(!everyIPv4.contains("2001:db8::1"))
        #expect(try TrustedProxies(parsing: "::/0").contains("2001:db8::1"))
        #expect(try TrustedProxies(parsing: "127.0.0.1").description == "127.0.0.1/32")
        #expect(try TrustedProxies(parsing: "10.9.8.7/8").description == "10.0.0.0/8")
    }

    @Test("a bad entry is an error that names it", arguments: [
        "", "10.0.0.0/33", "2001:db8::/129", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/8,", "proxy.example.org", "10.0.0.0/8/8",
        "::ffff:10.0.0.0/95", "10.0.0.0/ 8",
    ])
    func badEntries(_ text: String) {
        #expect(throws: TrustedProxiesError.self) { try TrustedProxies(parsing: text) }
    }
}
