import ScavengerConsole

/// `scavenger.js`, the browser's client of the line protocol, served by the HTTP port at
/// `/client.js` as an ES module (no build step, nothing from a CDN): promise-based calls over
/// `/ws`, reconnection with back-off, the session resumed with `AUTH`, every write sent with a
/// `REQUEST` key and resent under it when its reply was lost, and watches that resume with
/// `WATCH … SINCE`. The demo page and the hunt pages import it.
enum ClientModule {
    /// A strong validator of the module's text (FNV-1a, 64 bits): it changes whenever the text
    /// does, so a browser revalidates with `If-None-Match` and gets `304` while it holds this one.
    static let etag = StaticAsset.etag(of: script.utf8)

    static let script = PageFiles.text(PackageResources.client_js)
}
