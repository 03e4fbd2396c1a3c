import Foundation
import NIOCore
@testable import ScavengerBoard
import ScavengerCore
import ScavengerStore
import ScavengerTestSupport
import Testing

/// The console's HTTP rules, without a browser (scripts/browser/console_test.py drives the pages
/// in Chromium): cookies, CSRF, who gets in, what a stranger sees.
///
/// These tests live here, not in ScavengerConsoleTests, because what they test is the console as
/// the HTTP port serves it at /mod/ (requests, headers, cookies through ScavengerHTTPServer, with
/// this target's server and client helpers). The console's own logic, which needs no server
/// (forms, CSRF tokens, the views), is tested in ScavengerConsoleTests.
///
/// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("The moderators' console over HTTP", .timeLimit(.minutes(10)))
struct ConsoleTests {
    /// The value of a cookie the response sets, with the attributes it sets it with.
    static func setCookie(_ name: String, in head: String) -> String? {
        head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie: \(name.lowercased())=") }
            .map { String($0.dropFirst("set-cookie: ".count)) }
    }

    static func value(of cookie: String) -> String {
        String(cookie.split(separator: ";")[0].split(separator: "=", maxSplits: 1).last ?? "")
    }

    /// Signs in through the form as a browser would; returns the response.
    static func signIn(_ http: SocketAddress, _ login: String, _ password: String, headers: [String] = [])
        async throws -> (status: Int, head: String, body: String)
    {
        let page = try await httpRequest(http, "GET", "/mod/")
        let cookie = try #require(setCookie("scavenger_mod_signin", in: page.head))
        let token = value(of: cookie)
        #expect(page.body.contains("name=\"csrf\" value=\"\(token)\""))
        return try await httpRequest(
            http, "POST", "/mod/signin",
            headers: ["Content-Type: application/x-www-form-urlencoded", "Cookie: scavenger_mod_signin=\(token)"] + headers,
            body: "csrf=\(token)&login=\(login)&password=\(password)")
    }

    @Test("sign-in: only moderators get a session, in an HttpOnly SameSite=Strict cookie; forms need their token")
    func signInRules() async throws {
        try await TestEnvironment.make(prefix: "http").use { environment in
            let board = environment.board
            for name in ["plainuser", "moderna"] {
                _ = try await board.register(
                    name: name, email: "\(name)@example.org", password: "password1", on: Session(connectionID: 1))
            }
            #expect(try await board.store.setRole(username: "moderna", role: .moderator))
            try await withHTTPServer(board: board) { http, _, _ in
                // A stranger sees the sign-in form, with the console's headers.
                let page = try await httpRequest(http, "GET", "/mod/")
                #expect(page.status == 200 && page.body.contains("<h1>Sign in</h1>"))
                #expect(page.head.lowercased().contains("content-security-policy: default-src 'none'"))
                let signInCookie = try #require(Self.setCookie("scavenger_mod_signin", in: page.head))
                #expect(signInCookie.contains("HttpOnly") && signInCookie.contains("SameSite=Strict") && signInCookie.contains("Path=/mod"))
                // Nothing behind the sign-in answers a stranger.
                let photo = try await httpRequest(http, "GET", "/mod/photo/pabcdefghijklmnopqrstuvwx")
                #expect(photo.status == 200 && photo.body.contains("<h1>Sign in</h1>"))
                let claim = try await httpRequest(
                    http, "POST", "/mod/item/pabcdefghijklmnopqrstuvwx/claim", headers: ["Content-Type: application/x-www-form-urlencoded"])
                #expect(claim.status == 401)
                // A sign-in form posted without its own token (a cross-site login) is refused.
                let forged = try await httpRequest(
                    http, "POST", "/mod/signin", headers: ["Content-Type: application/x-www-form-urlencoded"],
                    body: "login=moderna&password=password1")
                #expect(forged.status == 403 && Self.setCookie("scavenger_mod", in: forged.head) == nil)

                let wrong = try await Self.signIn(http, "moderna", "nope-nope")
                #expect(wrong.status == 401 && wrong.body.contains("Wrong name or password."))
                let plain = try await Self.signIn(http, "plainuser", "password1")
                #expect(plain.status == 403 && plain.body.contains("for moderators and admins"))
                #expect(Self.setCookie("scavenger_mod", in: plain.head) == nil)

                let signedIn = try await Self.signIn(http, "moderna", "password1")
                #expect(signedIn.status == 303)
                let session = try #require(Self.setCookie("scavenger_mod", in: signedIn.head))
                #expect(session.contains("HttpOnly") && session.contains("SameSite=Strict") && !session.contains("Secure"))
                let cookie = "Cookie: scavenger_mod=\(Self.value(of: session))"
                let queue = try await httpRequest(http, "GET", "/mod/", headers: [cookie])
                #expect(queue.status == 200 && queue.body.contains("Report queue") && queue.body.contains("moderna"))
                // A changing form without the session's CSRF token does nothing.
                let noToken = try await httpRequest(
                    http, "POST", "/mod/signout", headers: [cookie, "Content-Type: application/x-www-form-urlencoded"], body: "")
                #expect(noToken.status == 403)
                #expect(try await httpRequest(http, "GET", "/mod/log", headers: [cookie]).status == 200)
                #expect(try await httpRequest(http, "GET", "/mod/item/pnothere", headers: [cookie]).status == 404)

                // Behind a TLS-terminating proxy the cookie is Secure.
                let proxied = try await Self.signIn(http, "moderna", "password1", headers: ["X-Forwarded-Proto: https"])
                #expect(Self.setCookie("scavenger_mod", in: proxied.head)?.contains("Secure") == true)
            }
        }
    }
}
