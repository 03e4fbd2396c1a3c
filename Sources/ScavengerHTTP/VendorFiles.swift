import Foundation
import Hummingbird
import HTTPTypes

/// Third-party browser libraries the pages use, served from the files a Debian package installed
/// (Leaflet from `libjs-leaflet`, under `/usr/share/javascript/leaflet`), so that no page loads
/// script from elsewhere and the library is kept up to date by the system's packages.
///
/// Only the files named here are served, each with its content type: a request path is looked up,
/// never joined to the directory, so `..`, encoded slashes and other files of the directory are
/// all `404`.
struct VendorFiles: Sendable {
    /// The URL prefix, without its trailing slash: `/vendor/leaflet`.
    let prefix: String
    /// The directory the files are read from.
    let directory: String
    /// Path below the prefix → content type.
    let files: [String: String]

    /// Leaflet 1.7 as Debian packages it: the script (full and minified), its style sheet, and the
    /// images the style sheet refers to (relative URLs, resolved below the prefix).
    static func leaflet(directory: String) -> VendorFiles {
        VendorFiles(prefix: "/vendor/leaflet", directory: directory, files: [
            "leaflet.js": "text/javascript; charset=utf-8",
            "leaflet.min.js": "text/javascript; charset=utf-8",
            "leaflet.css": "text/css; charset=utf-8",
            "images/layers.png": "image/png",
            "images/layers-2x.png": "image/png",
            "images/marker-icon.png": "image/png",
            "images/marker-icon-2x.png": "image/png",
            "images/marker-shadow.png": "image/png",
        ])
    }

    /// The file a request path below the prefix names (its segments joined with `/`), with its
    /// content type; nil for anything not in ``files``.
    func file(_ path: String) -> (path: String, contentType: String)? {
        guard let contentType = files[path] else { return nil }
        return (directory + "/" + path, contentType)
    }

    /// Adds `GET prefix/**`: a listed file with its content type (`404` when it is missing on
    /// disk, e.g. the package is not installed), anything else `404`. When the client accepts
    /// gzip and the package ships the file compressed beside it (`leaflet.min.js.gz`, as Debian
    /// does), that is sent instead, with `Content-Encoding: gzip`. Each answer has an ETag made
    /// of the file's size and modification time (`304` to a client that holds it) and may be
    /// reused for a day: the files change only when the package is upgraded.
    func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        let fileIO = FileIO()
        router.get(RouterPath(prefix + "/**")) { request, context -> Response in
            let path = context.parameters.getCatchAll().joined(separator: "/")
            guard let file = self.file(path), let plain = Self.version(of: file.path) else { throw HTTPError(.notFound) }
            var served = (path: file.path, tag: plain)
            var encoding: String?
            if StaticAsset.acceptsGzip(request.headers[.acceptEncoding]), let packed = Self.version(of: file.path + ".gz") {
                served = (file.path + ".gz", String(packed.dropLast()) + "-gz\"")
                encoding = "gzip"
            }
            var headers: HTTPFields = [
                .contentType: file.contentType, .eTag: served.tag, .cacheControl: "public, max-age=86400",
                .vary: "Accept-Encoding",
            ]
            if StaticAsset.matches(request.headers[.ifNoneMatch], served.tag) {
                return Response(status: .notModified, headers: headers)
            }
            if let encoding { headers[.contentEncoding] = encoding }
            let body = try await fileIO.loadFile(path: served.path, context: context)
            return Response(status: .ok, headers: headers, body: body)
        }
    }

    /// A validator of the file at `path` (its size and modification time), or nil when there is
    /// no such regular file.
    static func version(of path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return "\"\(String(status.st_size, radix: 16))-\(String(status.st_mtim.tv_sec, radix: 16))\""
    }
}
