import Hummingbird
import HTTPTypes

/// Headers every response of the HTTP port carries, unless its route set its own (the console
/// sets a stricter set): no framing by any site, no MIME sniffing, no referrer sent elsewhere,
/// and a content security policy without inline script. Errors (404, 405, …) get them too.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    /// For pages (the demo page): scripts, styles and images from this origin only, WebSocket
    /// and fetches to this origin only, nothing inline, never in a frame.
    static var pagePolicy: String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    /// For the pages with a map (the demo, /play, /host), which may show OpenStreetMap's tiles: the page policy, with images
    /// from OpenStreetMap's tile server too (images only: scripts and styles stay this origin's).
    static var mapPagePolicy: String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https://tile.openstreetmap.org; "
            + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    /// For everything else (text, JSON, scripts, errors): nothing at all may load from it.
    static var defaultPolicy: String { "default-src 'none'; frame-ancestors 'none'; base-uri 'none'" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        Self.harden(&response.headers)
        return response
    }

    /// Adds each header the response does not already have.
    ///
    /// No `Strict-Transport-Security`, not even over HTTPS: a hunt on a LAN is often served with a
    /// self-signed certificate, which players accept once with the browser's "proceed anyway". On
    /// a host that sent HSTS, browsers take that choice away (a certificate error can no longer
    /// be clicked through) and remember it for `max-age`, so a new self-signed certificate, or the
    /// same name on another laptop next week, would lock everyone out. Browsers ignore HSTS for a
    /// bare IP address anyway. Whoever serves a real certificate for a name can add it at their
    /// reverse proxy (scripts/proxies/).
    static func harden(_ headers: inout HTTPFields) {
        if headers[.contentSecurityPolicy] == nil {
            let isPage = headers[.contentType]?.hasPrefix("text/html") == true
            headers[.contentSecurityPolicy] = isPage ? pagePolicy : defaultPolicy
        }
        let defaults: [(String, String)] = [
            ("X-Frame-Options", "DENY"), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
        ]
        for (name, value) in defaults {
            let field = HTTPField.Name(name)!
            if headers[field] == nil { headers[field] = value }
        }
    }
}
