import ScavengerConsole

/// The hunt pages on the HTTP port: the player's page (`/play`) and the host's view (`/host`),
/// plain HTML over the `/ws` WebSocket, with their script and style sheet served by the daemon
/// (`/play.js`, `/host.js`: ES modules importing `/hunts.js`, which imports scavenger.js from
/// `/client.js`; `/hunts.css`) and Leaflet from the system's files
/// (`/vendor/leaflet/`): no inline script or style, nothing from a CDN. Only the map's tiles may
/// come from OpenStreetMap, when it can be reached; otherwise the map is a grid drawn on canvas.
enum HuntPages {
    /// The sign-in and registration forms both pages start with.
    static let accountSection = PageFiles.text(PackageResources.account_html)

    /// `/play`: sign in, join a hunt by code, its stops on a map, check in, the leaderboard and hints;
    /// the player's scores across hunts (PROFILE) and the ranking around them (RANKING AROUND).
    static let playHTML = PageFiles.page(PackageResources.play_html, including: ["account.html": accountSection])

    /// `/host`: create a hunt, place stops on the map, start it, send hints, review check-ins, print QR codes.
    static let hostHTML = PageFiles.page(PackageResources.host_html, including: ["account.html": accountSection])

    /// `/hunts.css`, both pages' style sheet (with the print layout of the QR sheet).
    static let style = PageFiles.text(PackageResources.hunts_css)

    /// `/hunts.js`, an ES module: the client (scavenger.js from `/client.js`), the session, the
    /// leaderboard, the map (tiles or grid).
    static let commonScript = PageFiles.text(PackageResources.hunts_js)

    /// `/play.js`: the player's page.
    static let playScript = PageFiles.text(PackageResources.play_js)

    /// `/basemap.js`: the map the pages draw on (Leaflet over OpenStreetMap's tiles, or a grid).
    static let basemapScript = PageFiles.text(PackageResources.basemap_js)

    /// `/pin-map.js`: the pins on a map at any zoom (MAP cells, photos as thumbnails), for the
    /// player's page and the demo page; `/pin-map.css` its style.
    static let pinMapScript = PageFiles.text(PackageResources.pin_map_js)
    static let pinMapStyle = PageFiles.text(PackageResources.pin_map_css)

    /// `/location.js`: why the location cannot be had when the page is not secure (plain http://
    /// on a LAN address), for the player's page and the demo page.
    static let locationScript = PageFiles.text(PackageResources.location_js)

    /// `/host.js`: the host's view.
    static let hostScript = PageFiles.text(PackageResources.host_js)

    /// `/notices.js`: messages next to the form that caused them, toasts, error texts (both pages).
    static let noticesScript = PageFiles.text(PackageResources.notices_js)

    /// `/play-scores.js`: the player's scores across hunts, their badges and the ranking around them.
    static let playScoresScript = PageFiles.text(PackageResources.play_scores_js)

    /// `/guest-join.js`: joining a hunt as a guest, with its code and a name (the player's page).
    static let guestJoinScript = PageFiles.text(PackageResources.guest_join_js)

    /// `/join-link.js`: the host's join link, its QR code and the projector view.
    static let joinLinkScript = PageFiles.text(PackageResources.join_link_js)

    /// The marker in the account section that tells the page whether this daemon sends mail.
    static let mailMarker = #"data-mail="on""#

    /// `html` as served by a daemon that sends mail (`mail`) or not: without it, the account
    /// section says so (`data-mail="off"`) and the page hides its recovery forms.
    static func page(_ html: String, mail: Bool) -> String {
        mail ? html : html.replacing(mailMarker, with: #"data-mail="off""#)
    }
}
