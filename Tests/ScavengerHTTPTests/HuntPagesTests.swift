import Foundation
import ScavengerTestSupport
import Testing

@Suite("The hunt pages on the HTTP port: /play, /host, their scripts and style sheet", .timeLimit(.minutes(5)))
struct HuntPagesTests {
    @Test("/play and /host are HTML under the map policy: scripts and styles from this origin only, tiles from OpenStreetMap",
          arguments: [("/play", "/play.js"), ("/host", "/host.js")])
    func pages(path: String, script: String) async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let page = try await httpRequest(http, "GET", path)
            #expect(page.status == 200)
            #expect(header("content-type", in: page.head) == "text/html; charset=utf-8")
            let policy = try #require(header("content-security-policy", in: page.head))
            #expect(policy.contains("default-src 'none'"))
            #expect(policy.contains("script-src 'self';"))
            #expect(policy.contains("style-src 'self';"))
            #expect(policy.contains("img-src 'self' data: https://tile.openstreetmap.org;"))
            #expect(policy.contains("connect-src 'self'"))
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
            #expect(header("x-frame-options", in: page.head) == "DENY")
            // Leaflet from the daemon, then the page's own module (which imports /hunts.js and
            // /client.js); nothing inline.
            #expect(page.body.contains("<script src=\"/vendor/leaflet/leaflet.min.js\"></script>\n<script type=\"module\" src=\"\(script)\"></script>"))
            #expect(page.body.contains("<link rel=\"stylesheet\" href=\"/vendor/leaflet/leaflet.css\">"))
            #expect(page.body.contains("<link rel=\"stylesheet\" href=\"/hunts.css\">"))
            #expect(!page.body.contains("<script>") && !page.body.contains("<style") && !page.body.contains(" style="))
            #expect(page.body.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil, "no inline event handler")
            #expect(!page.body.contains("http://") && !page.body.contains("https://"), "nothing from elsewhere")
        }
    }

    @Test("the scripts and the style sheet: their content types, the default policy, no markup built from text",
          arguments: [
              ("/hunts.js", "text/javascript; charset=utf-8"), ("/play.js", "text/javascript; charset=utf-8"),
              ("/host.js", "text/javascript; charset=utf-8"), ("/hunts.css", "text/css; charset=utf-8"),
              ("/client.js", "text/javascript; charset=utf-8"), ("/demo.js", "text/javascript; charset=utf-8"),
              ("/notices.js", "text/javascript; charset=utf-8"), ("/play-scores.js", "text/javascript; charset=utf-8"),
              ("/join-link.js", "text/javascript; charset=utf-8"), ("/guest-join.js", "text/javascript; charset=utf-8"),
              ("/basemap.js", "text/javascript; charset=utf-8"), ("/pin-map.js", "text/javascript; charset=utf-8"),
              ("/pin-map.css", "text/css; charset=utf-8"),
          ])
    func assets(path: String, contentType: String) async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let asset = try await httpRequest(http, "GET", path)
            #expect(asset.status == 200)
            #expect(header("content-type", in: asset.head) == contentType)
            #expect(header("content-security-policy", in: asset.head) == "default-src 'none'; frame-ancestors 'none'; base-uri 'none'")
            #expect(header("x-content-type-options", in: asset.head) == "nosniff")
            #expect(!asset.body.isEmpty)
            // What the server sends is put in the page as text, never parsed as HTML.
            for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"] {
                #expect(!asset.body.contains(sink), "\(path) uses \(sink)")
            }
        }
    }
}
