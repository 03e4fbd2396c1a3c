import Foundation
import HTTPTypes
import Hummingbird
import ScavengerBoard

/// The console's cookies and CSRF tokens.
///
/// The session cookie holds the same kind of token `LOGIN` returns (stored only hashed), and is
/// HttpOnly, SameSite=Strict, limited to `/mod`, and Secure when the request came over TLS (a
/// proxy in front says so with `X-Forwarded-Proto: https`). A form that changes something carries
/// a CSRF token derived from the session token, which a page of another site cannot read; the
/// sign-in form, before any session, carries a random token that must match a cookie of its own
/// (double submit).
enum ConsoleSecurity {
    static let sessionCookie = "scavenger_mod"
    static let signInCookie = "scavenger_mod_signin"
    static let path = "/mod"

    /// The CSRF token of a session: a digest of its token, so it needs no storage.
    static func csrfToken(forSession token: String) -> String {
        Secrets.digestHex("scavenger console csrf\u{0}" + token)
    }

    /// Whether `given` equals `expected`, in constant time.
    static func matches(_ given: String?, _ expected: String) -> Bool {
        guard let given else { return false }
        return Secrets.constantTimeEqual(given, expected)
    }

    /// Whether the request reached the daemon over TLS, as far as it can tell.
    static func isSecure(_ request: Request) -> Bool {
        request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased() == "https"
    }

    static func cookie(_ name: String, value: String, secure: Bool, maxAge: Int? = nil) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: path, secure: secure, httpOnly: true, sameSite: .strict)
    }

    /// A cookie that tells the browser to forget `name`.
    static func expired(_ name: String, secure: Bool) -> Cookie {
        cookie(name, value: "", secure: secure, maxAge: 0)
    }

    /// Headers every console response carries: no scripts at all, nothing from elsewhere, no
    /// framing, no caching of moderation data.
    static func harden(_ headers: inout HTTPFields) {
        headers[.contentSecurityPolicy] =
            "default-src 'none'; img-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        headers[.cacheControl] = "no-store"
    }
}
