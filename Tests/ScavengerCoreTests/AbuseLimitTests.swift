import ScavengerCore
import Testing

@Suite("Client addresses as throttles count them")
struct ClientAddressTests {
    @Test(arguments: [
        ("203.0.113.7", "203.0.113.7"),
        ("0.0.0.0", "0.0.0.0"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"),
        ("2001:DB8::1", "2001:db8:0:0::/64"),
        ("::1", "0:0:0:0::/64"),
        ("::", "0:0:0:0::/64"),
        ("::ffff:10.0.0.1", "10.0.0.1"),
        ("::ffff:a00:1", "10.0.0.1"),
        ("fe80::1%eth0", "fe80:0:0:0::/64"),
        ("64:ff9b::192.0.2.1", "64:ff9b:0:0::/64"),
    ])
    func key(address: String, expected: String) {
        #expect(ClientAddress.key(address) == expected)
    }

    @Test(arguments: [
        "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1..2.3", "01234.1.1.1", "-1.2.3.4", "::1::2", "1:2:3:4:5:6:7:8:9",
        "1:2:3:4:5:6:7", "12345::", "g::1", ":1", "1:", "1.2.3.4::", "localhost", "1:2:3:4:5:6:7::8",
    ])
    func notAnAddress(text: String) {
        #expect(ClientAddress.key(text) == nil)
    }
}

@Suite("Rates written COUNT/SECONDS")
struct RateLimitTests {
    @Test(arguments: [("30/600", 30, 600), ("1/1", 1, 1), ("1000000000/1000000000", 1_000_000_000, 1_000_000_000)])
    func parses(text: String, count: Int, seconds: Int) throws {
        let rate = try #require(RateLimit(parsing: text))
        #expect(rate.count == count && rate.seconds == seconds)
        #expect(rate.description == text)
    }

    @Test(arguments: ["", "30", "30/", "/600", "0/600", "30/0", "-1/60", "+1/60", "1/60/2", "a/b", "1.5/60", " 1/60", "1000000001/1"])
    func refuses(text: String) {
        #expect(RateLimit(parsing: text) == nil)
    }

    @Test func staffGetMore() {
        let rates = WriteRates(post: RateLimit(count: 3, seconds: 60), photo: nil, staffFactor: 10)
        #expect(rates.limit(.post, for: .user) == RateLimit(count: 3, seconds: 60))
        #expect(rates.limit(.post, for: .moderator) == RateLimit(count: 30, seconds: 60))
        #expect(rates.limit(.post, for: .admin) == RateLimit(count: 30, seconds: 60))
        #expect(rates.limit(.photo, for: .admin) == nil)
        #expect(RateLimit(count: .max / 2, seconds: 1).scaled(by: 1000).count > 0)
    }
}
