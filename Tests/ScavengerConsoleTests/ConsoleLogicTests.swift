import ScavengerCore
import Testing

@testable import ScavengerConsole

/// The console's own logic, with no server: forms, CSRF tokens, the views. The console as the HTTP
/// port serves it (sign-in, cookies, what a stranger sees) is tested in ScavengerHTTPTests
/// (ConsoleTests), which has the HTTP server and client helpers.
@Suite("Moderators' console: pure logic")
struct ConsoleLogicTests {
    @Test("forms decode percent escapes and plus signs; the first of a repeated field wins", arguments: [
        ("a=1&b=two+words", ["a": "1", "b": "two words"]),
        ("note=caf%C3%A9%20%26%20more&csrf=x", ["note": "café & more", "csrf": "x"]),
        ("a=1&a=2&empty=&flag", ["a": "1", "empty": "", "flag": ""]),
        ("", [:]),
    ])
    func forms(text: String, expected: [String: String]) throws {
        #expect(try ModeratorConsole.parseForm(text) == expected)
    }

    @Test("a broken percent escape is a bad form, not a crash")
    func brokenForm() {
        #expect(throws: ModeratorConsole.FormError.self) { try ModeratorConsole.parseForm("a=%E0%A4%A") }
    }

    @Test("the CSRF token is the session's own and compared in full")
    func csrf() {
        let token = ConsoleSecurity.csrfToken(forSession: "session-a")
        #expect(token.count == 64)
        #expect(token != ConsoleSecurity.csrfToken(forSession: "session-b"))
        #expect(ConsoleSecurity.matches(token, token))
        #expect(!ConsoleSecurity.matches(String(token.dropLast()), token))
        #expect(!ConsoleSecurity.matches(nil, token))
        #expect(!ConsoleSecurity.matches("", token))
    }

    @Test("account ages read as people say them", arguments: [
        (0, "0 s"), (59, "59 s"), (60, "1 min"), (3599, "59 min"), (3600, "1 h"), (47 * 3600, "47 h"), (2 * 86400, "2 d"),
        (400 * 86400, "400 d"),
    ])
    func ages(seconds: Int, text: String) {
        #expect(ConsoleViews.age(seconds: seconds) == text)
    }

    @Test("the map puts north up and east right, leaves out what is past the radius, and scales round")
    func mapPositions() throws {
        let centre = try #require(ConsoleMap.position(lat: 52.5, lon: 13.4, centreLat: 52.5, centreLon: 13.4, radius: 500))
        #expect(centre.x == ConsoleMap.size / 2 && centre.y == ConsoleMap.size / 2)
        let north = Geodesy.destination(lat: 52.5, lon: 13.4, bearing: 0, distance: 250)
        let up = try #require(ConsoleMap.position(lat: north.lat, lon: north.lon, centreLat: 52.5, centreLon: 13.4, radius: 500))
        #expect(abs(up.x - centre.x) < 0.5 && up.y < centre.y)
        #expect(abs((centre.y - up.y) - (ConsoleMap.size / 2 - ConsoleMap.margin) / 2) < 1)
        let east = Geodesy.destination(lat: 52.5, lon: 13.4, bearing: 90, distance: 250)
        let right = try #require(ConsoleMap.position(lat: east.lat, lon: east.lon, centreLat: 52.5, centreLon: 13.4, radius: 500))
        #expect(right.x > centre.x && abs(right.y - centre.y) < 0.5)
        let far = Geodesy.destination(lat: 52.5, lon: 13.4, bearing: 45, distance: 800)
        #expect(ConsoleMap.position(lat: far.lat, lon: far.lon, centreLat: 52.5, centreLon: 13.4, radius: 500) == nil)
        // Across the antimeridian.
        #expect(ConsoleMap.position(lat: 0, lon: -179.999, centreLat: 0, centreLon: 179.999, radius: 500) != nil)
        #expect(ConsoleMap.scaleMetres(radius: 500) == 100)
        #expect(ConsoleMap.scaleMetres(radius: 2000) == 500)
        #expect(ConsoleMap.scaleMetres(radius: 30) == 5)
    }

    @Test("pin texts in the map are escaped")
    func mapEscapes() {
        let svg = ConsoleMap.svg(centreLat: 0, centreLon: 0, radius: 500, others: [(0.001, 0.001, "<script>&\"")])
        #expect(svg.contains("&lt;script&gt;&amp;&quot;"))
        #expect(!svg.contains("<script>"))
        #expect(svg.contains("1 other live pin within 500 m"))
    }
}
