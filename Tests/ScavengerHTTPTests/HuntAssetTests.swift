import Foundation
import QRCode
import ScavengerHTTP
import ScavengerTestSupport
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A directory laid out as libjs-leaflet's, with files of known content, inside a parent that also
/// holds a file no request may reach; removed after `body`.
private func withFakeLeaflet(_ body: (_ directory: String) async throws -> Void) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("hunt-pages-\(UUID().uuidString)")
    let leaflet = root.appendingPathComponent("leaflet")
    try FileManager.default.createDirectory(at: leaflet.appendingPathComponent("images"), withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    try Data("/* leaflet.js of the test */ window.L = {};\n".utf8).write(to: leaflet.appendingPathComponent("leaflet.js"))
    try Data(".leaflet-container { color: red; }\n".utf8).write(to: leaflet.appendingPathComponent("leaflet.css"))
    try Data("PNG-OF-THE-TEST".utf8).write(to: leaflet.appendingPathComponent("images/marker-icon.png"))
    // In the directory but not a file the pages use: never served.
    try Data("{\"map\": true}".utf8).write(to: leaflet.appendingPathComponent("leaflet.js.map"))
    // Beside the directory: what a path traversal would be after.
    try Data("SECRET-OUTSIDE-THE-DIRECTORY".utf8).write(to: root.appendingPathComponent("secret.txt"))
    try await body(leaflet.path)
}

@Suite("What the hunt pages load: Leaflet under /vendor/leaflet/, QR codes from POST /qr", .timeLimit(.minutes(5)))
struct HuntAssetTests {
    @Test("Leaflet's files are served from the configured directory with their content types")
    func vendorFiles() async throws {
        try await withFakeLeaflet { directory in
            try await withHTTPServer(board: OfflineBoard.shared, configure: { $0.leafletDirectory = directory }) { http, _, _ in
                let script = try await httpRequest(http, "GET", "/vendor/leaflet/leaflet.js")
                #expect(script.status == 200)
                #expect(header("content-type", in: script.head) == "text/javascript; charset=utf-8")
                #expect(script.body == "/* leaflet.js of the test */ window.L = {};\n")
                #expect(header("content-security-policy", in: script.head)?.hasPrefix("default-src 'none'") == true)
                let style = try await httpRequest(http, "GET", "/vendor/leaflet/leaflet.css")
                #expect(style.status == 200)
                #expect(header("content-type", in: style.head) == "text/css; charset=utf-8")
                #expect(style.body == ".leaflet-container { color: red; }\n")
                let icon = try await httpRequest(http, "GET", "/vendor/leaflet/images/marker-icon.png")
                #expect(icon.status == 200)
                #expect(header("content-type", in: icon.head) == "image/png")
                #expect(icon.body == "PNG-OF-THE-TEST")
                // A file the pages may use but the directory lacks (libjs-leaflet not installed).
                #expect(try await httpGet(http, "/vendor/leaflet/leaflet.min.js").status == 404)
            }
        }
    }

    @Test("paths outside the list of Leaflet's files are 404: other files, directories, other libraries",
          arguments: [
              "/vendor/leaflet/leaflet.js.map", "/vendor/leaflet/", "/vendor/leaflet", "/vendor/leaflet/images",
              "/vendor/leaflet/images/", "/vendor/leaflet/nope.js", "/vendor/leaflet/LEAFLET.JS", "/vendor/",
              "/vendor/jquery/jquery.js", "/vendor/leaflet/images/marker-icon.png/x",
          ])
    func unknownVendorPaths(path: String) async throws {
        try await withFakeLeaflet { directory in
            try await withHTTPServer(board: OfflineBoard.shared, configure: { $0.leafletDirectory = directory }) { http, _, _ in
                let response = try await httpGet(http, path)
                #expect(response.status == 404, "\(path)")
                #expect(!response.body.contains("\"map\""), "\(path)")
            }
        }
    }

    @Test("path traversal below /vendor/leaflet/ is refused, encoded or not",
          arguments: [
              "/vendor/leaflet/../secret.txt", "/vendor/leaflet/images/../../secret.txt", "/vendor/leaflet/%2e%2e/secret.txt",
              "/vendor/leaflet/..%2fsecret.txt", "/vendor/leaflet/%2E%2E%2Fsecret.txt", "/vendor/leaflet/images/..%2f..%2fsecret.txt",
              "/vendor/leaflet/../../../../../../etc/passwd", "/vendor/leaflet/..\\secret.txt", "/vendor/leaflet/./leaflet.js/../../secret.txt",
          ])
    func pathTraversal(path: String) async throws {
        try await withFakeLeaflet { directory in
            try await withHTTPServer(board: OfflineBoard.shared, configure: { $0.leafletDirectory = directory }) { http, _, _ in
                let response = try await httpRequest(http, "GET", path)
                #expect([400, 404].contains(response.status), "\(path): \(response.status)")
                #expect(!response.body.contains("SECRET-OUTSIDE-THE-DIRECTORY"), "\(path)")
                #expect(!response.body.contains("root:"), "\(path)")
            }
        }
    }

    @Test("by default Leaflet is Debian's libjs-leaflet (scripts/lib.sh installs it)")
    func debianLeaflet() async throws {
        #expect(HTTPConfiguration(port: 0).leafletDirectory == "/usr/share/javascript/leaflet")
        let installed = FileManager.default.fileExists(atPath: "/usr/share/javascript/leaflet/leaflet.min.js")
        try #require(installed, "libjs-leaflet is not installed: scripts/test.sh installs it (scripts/lib.sh)")
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            // The minified build, the one the pages load.
            let script = try await httpRequest(http, "GET", "/vendor/leaflet/leaflet.min.js")
            #expect(script.status == 200)
            #expect(script.body.contains("Leaflet"))
            #expect(script.body.contains("GridLayer"))
            // Compressed as Debian ships it, for a client that accepts gzip: a quarter of the size.
            let packed = try await rawGet(http, "/vendor/leaflet/leaflet.min.js", headers: ["Accept-Encoding: gzip, deflate, br"])
            #expect(header("content-encoding", in: packed.head) == "gzip")
            #expect(try gunzip(packed.body) == Array(script.body.utf8))
            #expect(packed.body.count * 3 < script.body.utf8.count, "\(packed.body.count) bytes")
            let style = try await httpRequest(http, "GET", "/vendor/leaflet/leaflet.css")
            #expect(style.status == 200 && style.body.contains(".leaflet-container"))
            for image in ["layers.png", "layers-2x.png", "marker-icon.png", "marker-icon-2x.png", "marker-shadow.png"] {
                let response = try await httpRequest(http, "GET", "/vendor/leaflet/images/\(image)")
                #expect(response.status == 200, "\(image)")
                #expect(header("content-type", in: response.head) == "image/png", "\(image)")
            }
        }
    }

    @Test("POST /qr draws the text as the QRCode module's SVG, the title under it, not to be cached")
    func qrCode() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let body = #"{"text": "K9X2-MILL", "title": "3. The <old> mill & wheel"}"#
            let response = try await httpRequest(http, "POST", "/qr", headers: ["Content-Type: application/json"], body: body)
            #expect(response.status == 200)
            #expect(header("content-type", in: response.head) == "image/svg+xml; charset=utf-8")
            #expect(header("cache-control", in: response.head) == "no-store")
            #expect(header("content-security-policy", in: response.head) == "default-src 'none'; frame-ancestors 'none'; base-uri 'none'")
            let expected = try QRCode.encode("K9X2-MILL", correction: .medium).svg(title: "3. The <old> mill & wheel")
            #expect(response.body == expected)
            // Well-formed XML whose root is an SVG document, the title escaped in it.
            let parser = XMLParser(data: Data(response.body.utf8))
            let root = RootElement()
            parser.delegate = root
            #expect(parser.parse(), "not well-formed: \(String(describing: parser.parserError))")
            #expect(root.name == "svg" && root.namespace == "http://www.w3.org/2000/svg")
            #expect(response.body.contains("3. The &lt;old&gt; mill &amp; wheel"))

            // Without a title: the code alone.
            let bare = try await httpRequest(
                http, "POST", "/qr", headers: ["Content-Type: application/json; charset=utf-8"], body: #"{"text": "HUNT"}"#)
            #expect(bare.status == 200)
            #expect(bare.body == (try QRCode.encode("HUNT", correction: .medium).svg()))
        }
    }

    @Test("POST /qr refuses empty, oversized and malformed input, and says why without quoting it",
          arguments: [
              (#"{"text": ""}"#, "application/json", 400),
              (#"{"title": "no text"}"#, "application/json", 400),
              (#"{"text": 42}"#, "application/json", 400),
              ("", "application/json", 400),
              ("not json", "application/json", 400),
              (#"{"text": "SECRET-CODE"}"#, "text/plain", 415),
              (#"{"text": "SECRET-CODE"}"#, "application/x-www-form-urlencoded", 415),
              (#"{"text": "\#(String(repeating: "S", count: 257))"}"#, "application/json", 413),
              (#"{"text": "SECRET-CODE", "title": "\#(String(repeating: "t", count: 321))"}"#, "application/json", 413),
              (#"{"text": "SECRET-CODE", "pad": "\#(String(repeating: "p", count: 3000))"}"#, "application/json", 413),
          ])
    func qrCodeRefusals(body: String, contentType: String, status: Int) async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let response = try await httpRequest(http, "POST", "/qr", headers: ["Content-Type: \(contentType)"], body: body)
            #expect(response.status == status)
            #expect(header("content-type", in: response.head) == "text/plain; charset=utf-8")
            #expect(!response.body.isEmpty && !response.body.contains("SECRET-CODE") && !response.body.contains("SSSS"))
        }
    }

    @Test("the QR code's text is read from the body only: GET /qr is not a route")
    func qrCodeNotByGet() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let response = try await httpGet(http, "/qr?text=K9X2")
            #expect(response.status == 404 || response.status == 405)
            #expect(!response.body.contains("<svg"))
        }
    }
}

/// The root element of an XML document, as XMLParser reports it.
private final class RootElement: NSObject, XMLParserDelegate {
    var name: String?
    var namespace: String?

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        if name == nil {
            name = elementName
            namespace = attributes["xmlns"]
        }
    }
}
