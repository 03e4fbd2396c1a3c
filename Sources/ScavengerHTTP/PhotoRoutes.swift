import Hummingbird
import HTTPTypes
import NIOCore
import ScavengerBoard
import ScavengerCore

/// `GET /photos/ID[?size=thumb|display]`: a pin's or a check-in's photo, the stripped original
/// or a size (JPEG, or WebP when `Accept` takes it; the original until the size is made), with
/// `ETag` (`304` on `If-None-Match`), `Content-Length` and the board's `Cache-Control`. A
/// hidden, removed or expired pin's photo is `404`; a check-in's needs `Authorization: Bearer
/// TOKEN` (`401` without a valid token, `404` for someone who may not see it).
enum PhotoRoutes {
    static func addRoutes(to router: Router<HTTPRequestContext>, board: Board) {
        router.get("/photos/:id") { request, context -> Response in
            let id = context.parameters.get("id") ?? ""
            let size: PhotoSize?
            switch request.uri.queryParameters.get("size") {
            case nil, "original": size = nil
            case let name?:
                guard let named = PhotoSize(rawValue: name) else {
                    return text("size must be thumb or display\n", status: .badRequest)
                }
                size = named
            }
            let reply: PhotoFileReply
            do throws(BoardError) {
                reply = try await board.photoFile(
                    id: id, size: size, webp: accepts(request.headers[.accept], "image/webp"),
                    bearer: bearer(request.headers[.authorization]))
            } catch {
                return refusal(error)
            }
            var headers: HTTPFields = [.contentType: reply.mime, .eTag: reply.etag, .cacheControl: reply.cacheControl]
            if size != nil { headers[.vary] = "Accept" }
            if StaticAsset.matches(request.headers[.ifNoneMatch], reply.etag) {
                return Response(status: .notModified, headers: headers)
            }
            headers[.contentLength] = String(reply.data.count)
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: reply.data)))
        }
    }

    /// The token of an `Authorization: Bearer TOKEN` field; nil for any other.
    static func bearer(_ field: String?) -> String? {
        guard let field else { return nil }
        let parts = field.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return StaticAsset.trimmed(parts[1])
    }

    /// Whether an `Accept` field takes `type` (named with a weight above 0; `*/*` alone does
    /// not count, so a browser that names no WebP gets JPEG).
    static func accepts(_ field: String?, _ type: String) -> Bool {
        guard let field else { return false }
        for item in field.split(separator: ",") {
            let parts = item.split(separator: ";").map { StaticAsset.trimmed($0).lowercased() }
            guard parts.first == type else { continue }
            let weight = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if weight > 0 { return true }
        }
        return false
    }

    private static func refusal(_ error: BoardError) -> Response {
        switch error.code {
        case .notFound, .forbidden:
            return text("no such photo\n", status: .notFound)
        case .unauthorized:
            var response = text("a check-in's photo needs Authorization: Bearer TOKEN\n", status: .unauthorized)
            response.headers[.wwwAuthenticate] = "Bearer"
            return response
        case .banned:
            return text("banned\n", status: .forbidden)
        case .rateLimited:
            return text("too many requests\n", status: .tooManyRequests)
        default:
            return text("unavailable\n", status: .serviceUnavailable)
        }
    }

    private static func text(_ body: String, status: HTTPResponse.Status) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
