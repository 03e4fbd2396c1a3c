import ScavengerConsole

/// The demo web client served at `/` on the HTTP port: a page that logs in, lists the pins near a
/// point (typed or from the browser's location) with their distances through one
/// `WATCH … SNAPSHOT`, posts a pin, and shows new pins arriving — plain HTML and JavaScript over
/// the `/ws` WebSocket through scavenger.js (`/client.js`), which reconnects and resumes the
/// watch by itself; nothing fetched from elsewhere, so it works offline. For app developers, to
/// see the protocol in use.
enum DemoPage {
    static let html = PageFiles.text(PackageResources.demo_html)

    /// The page's script, served as `/demo.js`, an ES module over `/client.js` (scavenger.js):
    /// the page has no inline script, so its CSP can forbid inline script altogether.
    static let script = PageFiles.text(PackageResources.demo_js)

    /// The page's style sheet, served as `/demo.css`.
    static let style = PageFiles.text(PackageResources.demo_css)
}
