import ProxyHeaders
import Testing

@Suite("The client of an HTTP request from Forwarded or X-Forwarded-For")
struct ForwardedForTests {
    static let trusted = try! TrustedProxies(parsing: "127.0.0.1/32,10.0.0.0/8,2001:db8:ffff::/48")

    struct Example: CustomTestStringConvertible, Sendable {
        let name: String
        var peer = "127.0.0.1"
        var forwarded: [String] = []
        var xForwardedFor: [String] = []
        /// Nil: the peer's own address is used.
        let client: String?
        var testDescription: String { name }
    }

    static let examples: [Example] = [
        Example(name: "X-Forwarded-For, one hop", xForwardedFor: ["198.51.100.7"], client: "198.51.100.7"),
        Example(name: "X-Forwarded-For, right-most untrusted wins", xForwardedFor: ["203.0.113.1, 198.51.100.7"], client: "198.51.100.7"),
        Example(name: "X-Forwarded-For, trusted hops skipped from the right",
                xForwardedFor: ["203.0.113.1, 198.51.100.7, 10.1.1.1,10.2.2.2"], client: "198.51.100.7"),
        Example(name: "X-Forwarded-For, several fields in order", xForwardedFor: ["198.51.100.7", "10.1.1.1"], client: "198.51.100.7"),
        Example(name: "X-Forwarded-For, every hop trusted: the left-most", xForwardedFor: ["10.3.3.3, 10.1.1.1"], client: "10.3.3.3"),
        Example(name: "X-Forwarded-For, IPv6 and ports", xForwardedFor: ["[2001:db8::7]:443, 10.0.0.1:80"], client: "2001:db8::7"),
        Example(name: "X-Forwarded-For, bare IPv6", xForwardedFor: ["2001:db8::7"], client: "2001:db8::7"),
        Example(name: "X-Forwarded-For, trusted IPv6 proxy skipped", xForwardedFor: ["2001:db8::7, 2001:db8:ffff::1"], client: "2001:db8::7"),
        Example(name: "X-Forwarded-For, garbage ends the walk", xForwardedFor: ["198.51.100.7, unknown"], client: nil),
        Example(name: "X-Forwarded-For, garbage left of the client is never reached",
                xForwardedFor: ["nonsense, 198.51.100.7"], client: "198.51.100.7"),
        Example(name: "X-Forwarded-For, empty", xForwardedFor: [""], client: nil),
        Example(name: "no fields", client: nil),
        Example(name: "Forwarded, one element", forwarded: ["for=198.51.100.7;proto=https"], client: "198.51.100.7"),
        Example(name: "Forwarded, quoted IPv6 with a port", forwarded: [#"For="[2001:db8:cafe::17]:4711""#], client: "2001:db8:cafe::17"),
        Example(name: "Forwarded, quoted IPv4 with a port", forwarded: [#"for="198.51.100.7:4711""#], client: "198.51.100.7"),
        Example(name: "Forwarded, several elements, trusted skipped",
                forwarded: ["for=203.0.113.1, for=198.51.100.7;by=10.0.0.1, for=10.9.9.9"], client: "198.51.100.7"),
        Example(name: "Forwarded, a quoted comma stays in its element",
                forwarded: [#"for=198.51.100.7;host="a,b", for=10.9.9.9"#], client: "198.51.100.7"),
        Example(name: "Forwarded wins over X-Forwarded-For", forwarded: ["for=198.51.100.7"], xForwardedFor: ["203.0.113.1"],
                client: "198.51.100.7"),
        Example(name: "Forwarded without for= falls back to X-Forwarded-For", forwarded: ["proto=https;host=example.org"],
                xForwardedFor: ["203.0.113.1"], client: "203.0.113.1"),
        Example(name: "Forwarded, unknown", forwarded: ["for=unknown"], client: nil),
        Example(name: "Forwarded, obfuscated", forwarded: ["for=_hidden, for=10.1.1.1"], client: nil),
        Example(name: "Forwarded, unquoted IPv6 in brackets is still read", forwarded: ["for=[2001:db8::7]"], client: "2001:db8::7"),
        Example(name: "Forwarded, an unterminated quote", forwarded: [#"for="198.51.100.7"#], client: nil),
        Example(name: "Forwarded, a bad port", forwarded: [#"for="198.51.100.7:99999""#], client: nil),
        Example(name: "untrusted peer: Forwarded ignored", peer: "203.0.113.50", forwarded: ["for=198.51.100.7"], client: nil),
        Example(name: "untrusted peer: X-Forwarded-For ignored", peer: "203.0.113.50", xForwardedFor: ["198.51.100.7"], client: nil),
        Example(name: "a trusted peer over a dual-stack socket", peer: "::ffff:127.0.0.1", xForwardedFor: ["198.51.100.7"],
                client: "198.51.100.7"),
    ]

    @Test("the client is the right-most untrusted hop, from a trusted peer only", arguments: examples)
    func client(_ example: Example) {
        let client = ForwardedFor.client(
            peer: IPAddress(example.peer), forwarded: example.forwarded, xForwardedFor: example.xForwardedFor, trusted: Self.trusted)
        #expect(client == example.client.flatMap { IPAddress($0) })
    }

    @Test("with no trusted proxies nothing is believed")
    func trustsNone() {
        #expect(ForwardedFor.client(
            peer: IPAddress("127.0.0.1"), forwarded: ["for=198.51.100.7"], xForwardedFor: ["198.51.100.7"], trusted: .none) == nil)
    }
}
