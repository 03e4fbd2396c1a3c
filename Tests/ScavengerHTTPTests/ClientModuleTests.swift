import Foundation
@testable import ScavengerHTTP
import ScavengerProtocol
import ScavengerTestSupport
import Testing

/// scavenger.js at `/client.js`: what the browser needs to load it as a module and to cache it,
/// and what it exports. (scripts/browser/client_test.py runs it in Chromium across a restart.)
@Suite("scavenger.js: the client module at /client.js", .timeLimit(.minutes(5)))
struct ClientModuleTests {
    @Test("GET /client.js answers 200 with a JavaScript content type, an ETag and the module's exports")
    func servesTheModule() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let module = try await httpRequest(http, "GET", "/client.js")
            #expect(module.status == 200)
            #expect(header("content-type", in: module.head) == "text/javascript; charset=utf-8")
            #expect(header("x-content-type-options", in: module.head) == "nosniff")
            #expect(header("cache-control", in: module.head) == "no-cache")
            let etag = try #require(header("etag", in: module.head))
            #expect(etag == ClientModule.etag)
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count > 2)
            #expect(module.body == ClientModule.script)
            for export in [
                "export class ScavengerClient", "export class ScavengerError", "export class Watch",
                "export function quote", "export function newRequestKey", "export const WRITE_COMMANDS",
            ] {
                #expect(module.body.contains(export), "missing \(export)")
            }
            // The typed helpers the pages use.
            for helper in ["call(line", "nearby(", "post(", "watch(lat", "watchHunt(", "checkin(", "leaderboard(", "login(", "async auth("] {
                #expect(module.body.contains("  " + helper), "missing \(helper)")
            }
            // Text is never parsed as markup, nothing is evaluated.
            for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"] {
                #expect(!module.body.contains(sink), "uses \(sink)")
            }
        }
    }

    @Test("a browser holding this version revalidates it: If-None-Match with the ETag is 304 without a body")
    func revalidates() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let again = try await httpRequest(http, "GET", "/client.js", headers: ["If-None-Match: \(ClientModule.etag)"])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(header("etag", in: again.head) == ClientModule.etag)
            let other = try await httpRequest(http, "GET", "/client.js", headers: ["If-None-Match: \"0\", \"1\""])
            #expect(other.status == 200)
            #expect(other.body == ClientModule.script)
        }
    }

    @Test("cross-origin reads of /client.js follow --allowed-origins: any origin without it, only those listed with it")
    func crossOrigin() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let any = try await httpRequest(http, "GET", "/client.js", headers: ["Origin: https://school.example"])
            #expect(header("access-control-allow-origin", in: any.head) == "*")
            #expect(header("vary", in: any.head)?.contains("Origin") == true)
        }
        try await withHTTPServer(board: OfflineBoard.shared, configure: { $0.allowedOrigins = ["https://school.example"] }) { http, _, _ in
            let listed = try await httpRequest(http, "GET", "/client.js", headers: ["Origin: https://school.example"])
            #expect(listed.status == 200)
            #expect(header("access-control-allow-origin", in: listed.head) == "https://school.example")
            let other = try await httpRequest(http, "GET", "/client.js", headers: ["Origin: https://elsewhere.example"])
            #expect(other.status == 200)
            #expect(header("access-control-allow-origin", in: other.head) == nil)
            let none = try await httpRequest(http, "GET", "/client.js")
            #expect(header("access-control-allow-origin", in: none.head) == nil)
        }
    }

    @Test("the hunt pages say whether the daemon sends mail: without it the account section is marked data-mail=off")
    func mailMarker() throws {
        #expect(HuntPages.playHTML.contains(HuntPages.mailMarker))
        #expect(HuntPages.hostHTML.contains(HuntPages.mailMarker))
        #expect(HuntPages.page(HuntPages.playHTML, mail: true) == HuntPages.playHTML)
        let off = HuntPages.page(HuntPages.playHTML, mail: false)
        #expect(off.contains(#"data-mail="off""#) && !off.contains(HuntPages.mailMarker))
    }

    @Test("the module's WRITE_COMMANDS are the commands that take a REQUEST key")
    func writeCommandsMatchTheDaemon() throws {
        let script = ClientModule.script
        let start = try #require(script.range(of: "export const WRITE_COMMANDS = Object.freeze(["))
        let end = try #require(script.range(of: "]);", range: start.upperBound..<script.endIndex))
        let listed = script[start.upperBound..<end.lowerBound]
            .split(separator: ",")
            .map { $0.filter { $0 != "\"" && !$0.isWhitespace } }
        #expect(Set(listed) == CommandSpec.keyedWrites)
        #expect(listed.count == CommandSpec.keyedWrites.count)
    }

    @Test("the demo page and the hunt pages load their scripts as modules importing /client.js")
    func pagesUseTheModule() async throws {
        try await withHTTPServer(board: OfflineBoard.shared) { http, _, _ in
            let demo = try await httpRequest(http, "GET", "/")
            #expect(demo.body.contains("<script type=\"module\" src=\"/demo.js\"></script>"))
            for (path, imports) in [("/demo.js", "/client.js"), ("/hunts.js", "/client.js"), ("/play.js", "/hunts.js"), ("/host.js", "/hunts.js")] {
                let script = try await httpRequest(http, "GET", path)
                #expect(script.status == 200)
                #expect(script.body.contains("from \"\(imports)\";"), "\(path) does not import \(imports)")
                #expect(!script.body.contains("new WebSocket"), "\(path) opens a socket of its own")
            }
        }
    }
}
