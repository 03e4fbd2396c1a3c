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
    /// disk, e.g. the package is not installed), anything else `404`.
    func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        let fileIO = FileIO()
        router.get(RouterPath(prefix + "/**")) { _, context -> Response in
            let path = context.parameters.getCatchAll().joined(separator: "/")
            guard let file = self.file(path) else { throw HTTPError(.notFound) }
            let body = try await fileIO.loadFile(path: file.path, context: context)
            return Response(status: .ok, headers: [
                .contentType: file.contentType,
                // A package upgrade replaces them; an hour's reuse is enough to spare reloads.
                .cacheControl: "public, max-age=3600",
            ], body: body)
        }
    }
}
