import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Mustache
import NIOCore
import ScavengerBoard
import ScavengerCore

/// The moderators' console at `/mod/`: server-rendered pages over the same application layer as
/// the line protocol's `MODQUEUE`, `CLAIM`, `RELEASE`, `RESOLVE` and `MODLOG`, so every rule
/// (roles, bans, claims, own content, throttled sign-in) is the board's, never the console's own.
///
/// No script runs in it: plain links and forms, which work with a keyboard and on a phone.
public struct ModeratorConsole: Sendable {
    let board: Board
    let library: MustacheLibrary
    let logger: Logger
    /// Queue items per page.
    let pageSize: Int
    /// The radius of the item's map, in metres.
    let mapRadius: Double

    public init(board: Board, logger: Logger, pageSize: Int = 20, mapRadius: Double = 500) throws {
        self.board = board
        self.library = try ConsoleTemplates.library()
        self.logger = logger
        self.pageSize = pageSize
        self.mapRadius = mapRadius
    }

    /// Adds the console's routes; `clientAddress` gives the address sign-ins are throttled by.
    public func addRoutes<Context: RequestContext>(
        to router: Router<Context>, clientAddress: @escaping @Sendable (Context) -> String?
    ) {
        router.get("/mod/console.css") { _, _ -> Response in
            var response = Self.body(ConsoleTemplates.stylesheet, type: "text/css; charset=utf-8", status: .ok)
            response.headers[.cacheControl] = "public, max-age=3600"
            return response
        }
        router.get("/mod/") { request, context in
            await signedIn(request, address: clientAddress(context)) { moderator in
                try await queuePage(request, moderator)
            }
        }
        router.post("/mod/signin") { request, context in
            await signIn(request, address: clientAddress(context))
        }
        router.post("/mod/signout") { request, context in
            await changing(request, address: clientAddress(context)) { moderator, _ in
                try await board.logOut(moderator.session)
                var response = Self.redirect(to: "/mod/")
                response.setCookie(ConsoleSecurity.expired(ConsoleSecurity.sessionCookie, secure: ConsoleSecurity.isSecure(request)))
                return response
            }
        }
        router.get("/mod/log") { request, context in
            await signedIn(request, address: clientAddress(context)) { moderator in
                try await logPage(request, moderator)
            }
        }
        router.get("/mod/item/:item") { request, context in
            let item = context.parameters.get("item") ?? ""
            return await signedIn(request, address: clientAddress(context)) { moderator in
                try await itemPage(item, moderator, notice: Self.notice(request.uri.queryParameters.get("done")))
            }
        }
        router.get("/mod/photo/:item") { request, context in
            let item = context.parameters.get("item") ?? ""
            return await signedIn(request, address: clientAddress(context)) { moderator in
                // `?size=thumb` (the queue's cards) or `?size=display`; the kept copy otherwise.
                let size = request.uri.queryParameters.get("size").flatMap(PhotoSize.init(rawValue:))
                guard let photo = try await board.evidencePhoto(item, by: moderator.session, size: size) else {
                    return Self.body("no photo is kept for that item\n", type: "text/plain; charset=utf-8", status: .notFound)
                }
                var response = Response(
                    status: .ok, headers: [.contentType: photo.mime], body: ResponseBody(byteBuffer: ByteBuffer(bytes: photo.data)))
                ConsoleSecurity.harden(&response.headers)
                response.headers[.cacheControl] = "private, no-store"
                return response
            }
        }
        for action in ["claim", "release", "resolve"] {
            router.post("/mod/item/:item/\(action)") { request, context in
                let item = context.parameters.get("item") ?? ""
                return await changing(request, address: clientAddress(context)) { moderator, form in
                    do {
                        switch action {
                        case "claim": _ = try await board.claim(item, by: moderator.session)
                        case "release": _ = try await board.release(item, by: moderator.session)
                        default: try await resolve(item, form: form, moderator)
                        }
                    } catch let refusal as BoardError where refusal.code != .unauthorized && refusal.code != .unavailable {
                        // Shown plainly on the item's page: someone else's claim, a resolved item…
                        var page = try await itemPage(item, moderator, problem: refusal.message)
                        page.status = Self.status(of: refusal)
                        return page
                    }
                    return Self.redirect(to: "/mod/item/\(item)?done=\(action)")
                }
            }
        }
    }

    // MARK: Signing in

    /// Who is signed in, as the board sees them now (a revoked session, a lost role or a ban
    /// takes effect on the next page).
    struct Moderator {
        let session: Session
        let user: User
        let csrf: String
    }

    /// Runs `page` for the signed-in moderator; shows the sign-in page to anyone else, and a
    /// plain refusal to a signed-in user who may not moderate.
    private func signedIn(
        _ request: Request, address: String?, _ page: (Moderator) async throws -> Response
    ) async -> Response {
        do {
            guard let moderator = try await moderator(request, address: address) else {
                return signInPage(request, problem: nil)
            }
            return try await page(moderator)
        } catch {
            return failure(error, request)
        }
    }

    /// As ``signedIn(_:address:_:)`` for a form that changes something: its CSRF token must be
    /// the session's, or nothing happens (403).
    private func changing(
        _ request: Request, address: String?, _ change: (Moderator, [String: String]) async throws -> Response
    ) async -> Response {
        do {
            let form = try await Self.form(request)
            guard let moderator = try await moderator(request, address: address) else {
                return signInPage(request, problem: "Your session has ended; sign in again.", status: .unauthorized)
            }
            guard ConsoleSecurity.matches(form["csrf"], moderator.csrf) else {
                return message(
                    title: "Refused", text: "The form's security token is missing or wrong; nothing was changed. Reload the page and try again.",
                    status: .forbidden, moderator: moderator)
            }
            return try await change(moderator, form)
        } catch {
            return failure(error, request)
        }
    }

    /// The moderator of the request's session cookie; nil when there is none or it has ended.
    private func moderator(_ request: Request, address: String?) async throws -> Moderator? {
        guard let token = request.cookies[ConsoleSecurity.sessionCookie]?.value, !token.isEmpty else { return nil }
        let session = Session(connectionID: 0, address: address)
        do {
            _ = try await board.resume(token: token, on: session)
        } catch {
            guard error.code == .unauthorized else { throw error }
            return nil
        }
        let user = try await board.signedInModerator(of: session)
        return Moderator(session: session, user: user, csrf: ConsoleSecurity.csrfToken(forSession: token))
    }

    private func signIn(_ request: Request, address: String?) async -> Response {
        do {
            let form = try await Self.form(request)
            let login = form["login"] ?? ""
            guard let expected = request.cookies[ConsoleSecurity.signInCookie]?.value,
                ConsoleSecurity.matches(form["csrf"], expected)
            else {
                return signInPage(
                    request, problem: "The sign-in form had expired or its security token was wrong; please try again.",
                    login: login, status: .forbidden)
            }
            let session = Session(connectionID: 0, address: address)
            let signIn: SignIn
            do {
                signIn = try await board.logIn(login, password: form["password"] ?? "", on: session)
            } catch {
                let refusal: BoardError = error
                guard refusal.code == .unauthorized || refusal.code == .rateLimited else { throw refusal }
                let text = refusal.code == .rateLimited
                    ? "Too many failed sign-ins; wait \(refusal.retryAfterSeconds ?? 1) seconds and try again."
                    : "Wrong name or password."
                return signInPage(request, problem: text, login: login, status: Self.status(of: refusal))
            }
            do {
                _ = try await board.signedInModerator(of: session)
            } catch {
                let refusal: BoardError = error
                guard refusal.code == .forbidden || refusal.code == .banned else { throw refusal }
                // Not for them: the session just made ends at once.
                try? await board.logOut(session)
                let text = refusal.code == .banned
                    ? "Your account is banned until \(refusal.message); a banned moderator has no console."
                    : "The console is for moderators and admins; your account is neither."
                return signInPage(request, problem: text, login: login, status: .forbidden)
            }
            let secure = ConsoleSecurity.isSecure(request)
            var response = Self.redirect(to: "/mod/")
            response.setCookie(ConsoleSecurity.cookie(ConsoleSecurity.sessionCookie, value: signIn.token, secure: secure))
            response.setCookie(ConsoleSecurity.expired(ConsoleSecurity.signInCookie, secure: secure))
            logger.info("console sign-in", metadata: ["moderator": "\(signIn.user.name)"])
            return response
        } catch {
            return failure(error, request)
        }
    }

    /// The sign-in form, with a fresh token in a cookie of its own and in the form.
    private func signInPage(
        _ request: Request, problem: String?, login: String = "", status: HTTPResponse.Status = .ok
    ) -> Response {
        let token = Secrets.randomToken()
        var context: [String: Any] = ["title": "Sign in", "signInCSRF": token, "login": login]
        if let problem { context["problem"] = problem }
        var response = render("signin", context, status: status)
        response.setCookie(ConsoleSecurity.cookie(ConsoleSecurity.signInCookie, value: token, secure: ConsoleSecurity.isSecure(request)))
        return response
    }

    // MARK: Pages

    private func queuePage(_ request: Request, _ moderator: Moderator) async throws -> Response {
        let query = request.uri.queryParameters
        let statusText = query.get("status") ?? "open"
        let status = statusText == "all" ? nil : ItemStatus(rawValue: statusText) ?? .open
        let reasonText = query.get("reason") ?? "any"
        let reason = ReportReason(rawValue: reasonText)
        let page = max(1, min(10_000, query.get("page").flatMap { Int($0) } ?? 1))
        let items = try await board.moderationQueue(
            status: status, reason: reason, limit: pageSize + 1, offset: (page - 1) * pageSize, by: moderator.session)
        let cards = items.prefix(pageSize).map { entry -> [String: Any] in
            var card = ConsoleViews.item(entry.item)
            let (ages, fresh) = ConsoleViews.ages(entry.reports)
            card["ages"] = ages
            if fresh > 0 { card["freshReporters"] = fresh }
            return card
        }
        func link(_ page: Int) -> String {
            "/mod/?status=\(status?.rawValue ?? "all")&reason=\(reason?.rawValue ?? "any")&page=\(page)"
        }
        var context = frame(moderator, title: "Queue")
        context["onQueue"] = true
        context["items"] = Array(cards)
        context["statuses"] = ConsoleViews.options(
            [("open", "Open"), ("claimed", "Claimed"), ("resolved", "Resolved"), ("all", "All")],
            selected: status?.rawValue ?? "all")
        context["reasons"] = ConsoleViews.options(
            [("any", "Any reason")] + ReportReason.allCases.map { ($0.rawValue, $0.rawValue.capitalized) },
            selected: reason?.rawValue ?? "any")
        if page > 1 { context["previous"] = link(page - 1) }
        if items.count > pageSize { context["next"] = link(page + 1) }
        return render("queue", context)
    }

    private func itemPage(_ item: String, _ moderator: Moderator, notice: String? = nil, problem: String? = nil) async throws -> Response {
        let review = try await board.review(item, by: moderator.session)
        let found = review.item
        var context = frame(moderator, title: "Item \(item)")
        context.merge(ConsoleViews.item(found)) { _, new in new }
        let me = moderator.user
        let own = review.author?.name.lowercased() == me.name.lowercased()
        let holds = found.status == .claimed && found.claimedBy == me.name
        let heldByOther = found.status == .claimed && !holds
        let isAdmin = me.role == .admin
        context["own"] = own && found.status != .resolved
        context["holds"] = holds
        context["heldByOther"] = heldByOther
        context["isAdmin"] = isAdmin
        context["resolved"] = found.status == .resolved
        context["canClaim"] = !own && found.status == .open
        context["canResolve"] = !own && found.status != .resolved && (holds || isAdmin)
        context["durations"] = ConsoleViews.options(
            [("3600", "1 hour"), ("86400", "1 day"), ("604800", "7 days"), ("2592000", "30 days"), ("permanent", "Permanently")],
            selected: "86400")
        context["reports"] = review.reports.map(ConsoleViews.report)
        context["reportCount"] = review.reports.count
        let fresh = ConsoleViews.ages(review.reports).fresh
        if fresh > 0 { context["freshReporters"] = fresh }
        if let author = review.author { context["authorHistory"] = ConsoleViews.author(author) }
        // Whether the author proved their email (VERIFY): shown beside their name.
        if let verified = try? await board.emailVerified(usernames: [found.content.author], by: moderator.session)
            .first(where: { $0.key.lowercased() == found.content.author.lowercased() })?.value {
            context["authorEmail"] = verified ? "verified" : "not verified"
        }
        let content = found.content
        context["map"] = ConsoleMap.svg(
            centreLat: content.lat, centreLon: content.lon, radius: mapRadius,
            others: nearby(lat: content.lat, lon: content.lon, except: content.pin ?? item))
        context["mapRadius"] = ConsoleMap.label(metres: mapRadius)
        context["osm"] = ConsoleViews.openStreetMapURL(lat: content.lat, lon: content.lon)
        if let notice { context["notice"] = notice }
        if let problem { context["problem"] = problem }
        return render("item", context)
    }

    /// Live pins around a place from the feed (none while it is not loaded).
    private func nearby(lat: Double, lon: Double, except id: String) -> [(lat: Double, lon: Double, text: String)] {
        let query = NearbyQuery(lat: lat, lon: lon, radius: mapRadius, limit: 200)
        let pins = (try? board.withNearby(query) { page in page.pins.map { Pin($0.record) } }) ?? []
        return pins.filter { $0.id != id }.map { ($0.lat, $0.lon, "\($0.author): \($0.text)") }
    }

    private func logPage(_ request: Request, _ moderator: Moderator) async throws -> Response {
        let before = request.uri.queryParameters.get("before").flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        let (entries, next) = try await board.moderationLog(limit: 50, before: before, by: moderator.session)
        var context = frame(moderator, title: "Audit log")
        context["onLog"] = true
        context["entries"] = entries.map(ConsoleViews.logEntry)
        if let next { context["next"] = "/mod/log?before=\(next)" }
        if before != nil { context["newest"] = true }
        return render("log", context)
    }

    private func resolve(_ item: String, form: [String: String], _ moderator: Moderator) async throws {
        guard let resolution = form["decision"].flatMap(Resolution.init(rawValue:)) else {
            throw BoardError(.badArgument, "Choose a decision: dismiss, remove or ban.")
        }
        var ban: BanLength?
        if resolution == .ban {
            switch form["duration"] ?? "" {
            case "permanent": ban = .permanent
            case let text:
                guard let seconds = Int(text), (1 ... RequestChecks.maximumBanSeconds).contains(seconds) else {
                    throw BoardError(.badArgument, "The ban length must be a number of seconds or permanent.")
                }
                ban = .seconds(seconds)
            }
        }
        let note = (form["note"] ?? "").replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        try board.checks.text(note, "The note", allowEmpty: true)
        _ = try await board.resolve(item, as: resolution, ban: ban, note: note.isEmpty ? nil : note, by: moderator.session)
    }

    // MARK: Rendering

    /// The values every signed-in page's header uses.
    private func frame(_ moderator: Moderator, title: String) -> [String: Any] {
        ["title": title, "moderator": moderator.user.name, "role": moderator.user.role.rawValue, "csrf": moderator.csrf]
    }

    private func render(_ template: String, _ context: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        let html = library.render(context, withTemplate: template) ?? "template \(template) is missing"
        return Self.body(html, type: "text/html; charset=utf-8", status: status)
    }

    private func message(title: String, text: String, status: HTTPResponse.Status, moderator: Moderator?) -> Response {
        var context: [String: Any] = ["title": title, "text": text]
        if let moderator { context.merge(frame(moderator, title: title)) { _, new in new } }
        return render("message", context, status: status)
    }

    /// What a failed page shows: a refusal in its own words, the database's absence plainly.
    private func failure(_ error: any Error, _ request: Request) -> Response {
        switch error {
        case let refusal as BoardError where refusal.code == .unauthorized:
            return signInPage(request, problem: "Your session has ended; sign in again.", status: .unauthorized)
        case let refusal as BoardError where refusal.code == .forbidden:
            return message(title: "Not for you", text: "The console is for moderators and admins; your account is neither.", status: .forbidden, moderator: nil)
        case let refusal as BoardError where refusal.code == .banned:
            return message(title: "Banned", text: "Your account is banned until \(refusal.message); a banned moderator has no console.", status: .forbidden, moderator: nil)
        case let refusal as BoardError where refusal.code == .unavailable:
            // Logged by the board with its cause.
            return message(title: "Unavailable", text: "Not just now (\(refusal.message)); try again in a moment.", status: .serviceUnavailable, moderator: nil)
        case let refusal as BoardError where refusal.code == .internalError:
            // Logged by the board with its cause.
            return message(title: "Something went wrong", text: "The page could not be made; the error is in the daemon's log.", status: .internalServerError, moderator: nil)
        case let refusal as BoardError:
            return message(title: "Refused", text: refusal.message, status: Self.status(of: refusal), moderator: nil)
        case let error as FormError:
            return message(title: "Bad request", text: error.message, status: .badRequest, moderator: nil)
        default:
            logger.error("console page failed", metadata: ["error": "\(error)"])
            return message(title: "Something went wrong", text: "The page could not be made; the error is in the daemon's log.", status: .internalServerError, moderator: nil)
        }
    }

    static func status(of refusal: BoardError) -> HTTPResponse.Status {
        switch refusal.code {
        case .unauthorized: .unauthorized
        case .forbidden, .banned: .forbidden
        case .notFound: .notFound
        case .conflict: .conflict
        case .rateLimited: .tooManyRequests
        case .badArgument, .tooFar: .badRequest
        case .tooLarge: .contentTooLarge
        case .unavailable: .serviceUnavailable
        case .internalError: .internalServerError
        }
    }

    static func notice(_ done: String?) -> String? {
        switch done {
        case "claim": "You claimed this item; it is yours for the claim's time."
        case "release": "You released your claim; the item is open for others."
        case "resolve": "Resolved; the decision is in the audit log."
        default: nil
        }
    }

    static func body(_ text: String, type: String, status: HTTPResponse.Status) -> Response {
        var response = Response(status: status, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        ConsoleSecurity.harden(&response.headers)
        return response
    }

    /// 303 See Other: after a form, the browser fetches the page anew.
    static func redirect(to location: String) -> Response {
        var response = Response(status: .seeOther, headers: [.location: location])
        ConsoleSecurity.harden(&response.headers)
        return response
    }

    // MARK: Forms

    struct FormError: Error {
        let message: String
    }

    /// A form's fields (`application/x-www-form-urlencoded`, at most 16 KiB); a repeated field
    /// keeps its first value.
    static func form(_ request: Request) async throws -> [String: String] {
        guard request.method == .post else { return [:] }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: 16 * 1024)
        } catch {
            throw FormError(message: "The form is too large.")
        }
        return try parseForm(String(buffer: body))
    }

    static func parseForm(_ text: String) throws -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) throws -> String {
                guard let value = part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
                    throw FormError(message: "The form is not properly encoded.")
                }
                return value
            }
            let name = try decode(parts[0])
            let value = parts.count > 1 ? try decode(parts[1]) : ""
            if fields[name] == nil { fields[name] = value }
        }
        return fields
    }
}
