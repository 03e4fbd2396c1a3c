import Foundation
@testable import ScavengerHTTP
import Testing

/// `/location.js` in Node: the pages say that the location needs HTTPS when the page is not a
/// secure one (plain http:// on a LAN address) or the browser's error says so, and not otherwise.
@Suite("The location's HTTPS message", .enabled(if: Node.path != nil, "no node on PATH"))
struct LocationMessageTests {
    static let script = #"""
        import { locationNeedsHTTPS, HTTPS_NEEDED, isLocalHost } from "./location.mjs";
        const page = (secure, hostname) => ({ isSecureContext: secure, location: { hostname } });
        const denied = { code: 1, message: "User denied Geolocation" };
        console.log(JSON.stringify({
          lan: locationNeedsHTTPS(denied, page(false, "192.168.1.20")),
          lanNoError: locationNeedsHTTPS(null, page(false, "hunt.lan")),
          https: locationNeedsHTTPS(denied, page(true, "192.168.1.20")),
          localhost: locationNeedsHTTPS(denied, page(false, "localhost")),
          loopback: locationNeedsHTTPS(denied, page(false, "127.0.0.1")),
          ipv6Loopback: locationNeedsHTTPS(denied, page(false, "[::1]")),
          chromium: locationNeedsHTTPS({ code: 1, message: "Only secure origins are allowed (see: https://goo.gl/Y0ZkNV)." }, page(undefined, "x")),
          timeout: locationNeedsHTTPS({ code: 3, message: "Timeout expired" }, page(true, "192.168.1.20")),
          local: [isLocalHost("LOCALHOST"), isLocalHost("a.localhost"), isLocalHost("127.1.2.3"), isLocalHost("10.0.0.1")],
          message: HTTPS_NEEDED,
        }));
        """#

    @Test("insecure LAN page or a secure-origin error: the HTTPS message; localhost, HTTPS or another error: none")
    func message() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scavenger-location-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try HuntPages.locationScript.write(to: directory.appendingPathComponent("location.mjs"), atomically: true, encoding: .utf8)
        try Self.script.write(to: directory.appendingPathComponent("test.mjs"), atomically: true, encoding: .utf8)
        let run = try Node.run(["test.mjs"], in: directory)
        try #require(run.status == 0, "\(run.stderr)")
        let out = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let message = "Your location needs this page over HTTPS (https://…). Ask the organizer for the https address."
        #expect(out["message"] as? String == message)
        #expect(out["lan"] as? String == message)
        #expect(out["lanNoError"] as? String == message)
        #expect(out["chromium"] as? String == message)
        for key in ["https", "localhost", "loopback", "ipv6Loopback", "timeout"] {
            #expect(out[key] is NSNull, "\(key): \(String(describing: out[key]))")
        }
        #expect(out["local"] as? [Bool] == [true, true, true, false])
    }
}
