import ScavengerCore
import CompressNIO
import Hummingbird
import HTTPTypes
import NIOCore

/// A response the daemon holds in memory (a page, its script or style sheet, the client module,
/// the favicon), made once with its validator and its gzip-compressed form: a browser that
/// accepts gzip gets the smaller body, and one that holds this version revalidates it with
/// `If-None-Match` and gets `304` without a body.
struct StaticAsset: Sendable {
    let contentType: String
    let cacheControl: String
    /// The page's own content security policy (the hunt pages'), or nil for the default one.
    let policy: String?
    let body: ByteBuffer
    /// The body compressed, or nil when compressing does not make it smaller.
    let gzipped: ByteBuffer?
    /// A strong validator of the body: FNV-1a (64 bits) of its bytes, quoted. The compressed
    /// form, another representation, has its own (the same with `-gz`).
    let etag: String

    init(_ text: String, contentType: String, cacheControl: String = "no-cache", policy: String? = nil) {
        self.init(Array(text.utf8), contentType: contentType, cacheControl: cacheControl, policy: policy)
    }

    init(_ bytes: [UInt8], contentType: String, cacheControl: String = "no-cache", policy: String? = nil) {
        self.contentType = contentType
        self.cacheControl = cacheControl
        self.policy = policy
        var buffer = ByteBuffer()
        buffer.writeBytes(bytes)
        body = buffer
        etag = Self.etag(of: bytes)
        var input = buffer
        if let compressed = try? input.compress(with: .gzip()), compressed.readableBytes < buffer.readableBytes {
            gzipped = compressed
        } else {
            gzipped = nil
        }
    }

    /// `"…"`: FNV-1a of the bytes, 64 bits, in hex.
    static func etag<Bytes: Sequence<UInt8>>(of bytes: Bytes) -> String {
        "\"" + String(FNV1a.hash(bytes), radix: 16) + "\""
    }

    /// The gzip form's validator.
    var gzipETag: String { String(etag.dropLast()) + "-gz\"" }

    /// The response to `request`: compressed when it accepts gzip, `304` when it holds it.
    func response(to request: Request) -> Response {
        let compressed = gzipped != nil && Self.acceptsGzip(request.headers[.acceptEncoding])
        let tag = compressed ? gzipETag : etag
        var headers: HTTPFields = [.contentType: contentType, .eTag: tag, .cacheControl: cacheControl, .vary: "Accept-Encoding"]
        if let policy { headers[.contentSecurityPolicy] = policy }
        if Self.matches(request.headers[.ifNoneMatch], tag) {
            return Response(status: .notModified, headers: headers)
        }
        if compressed { headers[.contentEncoding] = "gzip" }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: compressed ? gzipped! : body))
    }

    /// Whether an `Accept-Encoding` field accepts gzip: it names `gzip` (or `*`) with a weight
    /// above 0.
    static func acceptsGzip(_ field: String?) -> Bool {
        guard let field else { return false }
        for item in field.split(separator: ",") {
            let parts = item.split(separator: ";").map { trimmed($0).lowercased() }
            guard let coding = parts.first, coding == "gzip" || coding == "x-gzip" || coding == "*" else { continue }
            let weight = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if weight > 0 { return true }
        }
        return false
    }

    /// Whether an `If-None-Match` field names `tag` (or is `*`); weak tags compare as strong.
    static func matches(_ field: String?, _ tag: String) -> Bool {
        guard let field else { return false }
        return field.split(separator: ",").map { item in
            let tag = trimmed(item)
            return tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
        }.contains { $0 == tag || $0 == "*" }
    }

    /// `text` without the spaces and tabs around it.
    static func trimmed(_ text: Substring) -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(text.drop(while: blank).reversed().drop(while: blank).reversed())
    }
}
