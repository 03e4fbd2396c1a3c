/// The hunt pages on the HTTP port: the player's page (`/play`) and the host's view (`/host`),
/// plain HTML over the `/ws` WebSocket, with their script and style sheet served by the daemon
/// (`/play.js`, `/host.js`: ES modules importing `/hunts.js`, which imports scavenger.js from
/// `/client.js`; `/hunts.css`) and Leaflet from the system's files
/// (`/vendor/leaflet/`): no inline script or style, nothing from a CDN. Only the map's tiles may
/// come from OpenStreetMap, when it can be reached; otherwise the map is a grid drawn on canvas.
enum HuntPages {
    /// The sign-in and registration forms both pages start with.
    static let accountSection = #"""
<section id="account" class="no-print" aria-labelledby="account-heading">
<h2 id="account-heading">Account</h2>
<p><span id="who">Not signed in.</span> <button id="logout-button" type="button" hidden>Sign out</button></p>
<div id="account-forms" class="columns">
<form id="login-form">
<fieldset>
  <legend>Sign in</legend>
  <label>Name or email <input id="login-name" autocomplete="username" required></label>
  <label>Password <input id="login-password" type="password" autocomplete="current-password" required></label>
  <button id="login-button" type="submit">Sign in</button>
</fieldset>
</form>
<form id="register-form">
<fieldset>
  <legend>New here? Create an account</legend>
  <label>Username <input id="register-name" autocomplete="username" minlength="3" maxlength="32" pattern="[A-Za-z0-9_.\-]+" required></label>
  <label>Email <input id="register-email" type="email" autocomplete="email" required></label>
  <label>Password <input id="register-password" type="password" autocomplete="new-password" minlength="8" required></label>
  <button id="register-button" type="submit">Create account</button>
</fieldset>
</form>
</div>
</section>
"""#

    /// `/play`: sign in, join a hunt by code, its stops on a map, check in, the leaderboard and hints;
    /// the player's scores across hunts (PROFILE) and the ranking around them (RANKING AROUND).
    static let playHTML = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Scavenger hunt: play</title>
<link rel="stylesheet" href="/vendor/leaflet/leaflet.css">
<link rel="stylesheet" href="/hunts.css">
</head>
<body>
<header>
<h1>Scavenger hunt</h1>
<p id="status" role="status" aria-live="polite">Connecting…</p>
</header>
\#(accountSection)
<section id="join-section" hidden aria-labelledby="join-heading">
<h2 id="join-heading">Join a hunt</h2>
<form id="join-form">
<fieldset>
  <legend>The hunt's code, from its host</legend>
  <label>Code <input id="join-code" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="64" size="8" required></label>
  <label>Play as (optional) <input id="join-name" autocomplete="nickname" maxlength="32" pattern="[A-Za-z0-9_.\-]{3,32}"></label>
  <button id="join-button" type="submit">Join</button>
</fieldset>
</form>
<div id="my-hunts-section" hidden>
<h3>Your hunts</h3>
<ul id="my-hunts" class="plain"></ul>
</div>
</section>

<section id="scores-section" hidden aria-labelledby="scores-heading">
<h2 id="scores-heading">Your scores across hunts</h2>
<p id="profile" class="score"></p>
<div role="group" aria-label="Which ranking">
  <button id="ranking-all" type="button" class="small" aria-pressed="true">All time</button>
  <button id="ranking-week" type="button" class="small" aria-pressed="false">This week</button>
</div>
<table id="ranking">
<caption id="ranking-note" class="meta"></caption>
<thead><tr><th scope="col">#</th><th scope="col">Player</th><th scope="col">Points</th><th scope="col">Stops</th></tr></thead>
<tbody id="ranking-rows"></tbody>
</table>
</section>

<section id="hunt-section" hidden aria-labelledby="hunt-name">
<h2 id="hunt-name"></h2>
<p id="hunt-meta" class="meta"></p>
<p id="hunt-description"></p>
<p id="my-score" class="score"></p>
<p id="winners" class="score"></p>
<div class="layout">
<div class="main">
<div id="map" role="application" aria-label="Map of the hunt's stops"></div>
<p id="map-note" class="meta"></p>
<form id="checkin-form">
<fieldset>
  <legend>Check in where you stand</legend>
  <label>Stop <select id="checkin-stop"></select></label>
  <label id="code-field" hidden>Code found there <input id="checkin-code" autocomplete="off" autocapitalize="off" spellcheck="false" maxlength="64"></label>
  <label id="photo-field" hidden>Photo <input id="checkin-photo" type="file" accept="image/jpeg,image/png,image/gif,image/webp" capture="environment"></label>
  <button id="checkin-button" type="submit">Check in here</button>
</fieldset>
</form>
<div id="checkin-result" class="result" role="alert" aria-live="assertive"></div>
<h3>Stops</h3>
<p id="no-stops" class="meta"></p>
<ol id="stops" class="stops"></ol>
</div>
<aside class="side">
<h3>Leaderboard</h3>
<table id="leaderboard">
<thead><tr><th scope="col">#</th><th scope="col">Player</th><th scope="col">Points</th><th scope="col">Stops</th></tr></thead>
<tbody id="leaderboard-rows"></tbody>
</table>
<h3>Hints</h3>
<p id="no-hints" class="meta">No hint yet.</p>
<ul id="hints" class="hints"></ul>
<h3>Happening now</h3>
<ul id="activity" class="activity"></ul>
</aside>
</div>
</section>
<script src="/vendor/leaflet/leaflet.min.js"></script>
<script type="module" src="/play.js"></script>
</body>
</html>
"""#

    /// `/host`: create a hunt, place stops on the map, start it, send hints, review check-ins, print QR codes.
    static let hostHTML = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Scavenger hunt: host</title>
<link rel="stylesheet" href="/vendor/leaflet/leaflet.css">
<link rel="stylesheet" href="/hunts.css">
</head>
<body>
<header class="no-print">
<h1>Host a scavenger hunt</h1>
<p id="status" role="status" aria-live="polite">Connecting…</p>
</header>
\#(accountSection)
<section id="hunts-section" class="no-print" hidden aria-labelledby="hunts-heading">
<h2 id="hunts-heading">Your hunts</h2>
<p id="no-hunts" class="meta">You host no hunt yet.</p>
<ul id="my-hunts" class="plain"></ul>
<form id="create-form">
<fieldset>
  <legend>New hunt</legend>
  <label>Name <input id="create-name" maxlength="80" size="30" required></label>
  <label>Description <input id="create-description" maxlength="2000" size="40"></label>
  <label><input id="create-ordered" type="checkbox"> Stops in order</label>
  <label><input id="create-public" type="checkbox"> Public (listed, anyone may join)</label>
  <label>Lasts (minutes, optional) <input id="create-duration" type="number" min="1" max="43200" step="1"></label>
  <button id="create-button" type="submit">Create hunt</button>
</fieldset>
</form>
</section>

<section id="hunt-section" hidden aria-labelledby="hunt-name">
<div class="no-print">
<h2 id="hunt-name"></h2>
<p>Join code: <strong id="hunt-code" class="code"></strong> <span id="hunt-meta" class="meta"></span></p>
<p id="hunt-description"></p>
<p id="winners" class="score"></p>
<p><button id="start-button" type="button">Start now</button> <button id="end-button" type="button">End the hunt</button></p>
<div class="layout">
<div class="main">
<form id="goto-form" class="goto">
  <label>Go to <input id="goto-place" placeholder="52.5200, 13.4050" inputmode="decimal" autocomplete="off" spellcheck="false" size="22" required></label>
  <button id="goto-button" type="submit" class="small">Go</button>
  <span class="meta">latitude, longitude in degrees</span>
</form>
<div id="map" role="application" aria-label="Map: click to place a stop"></div>
<p id="map-note" class="meta"></p>
<form id="stop-form">
<fieldset id="stop-fieldset">
  <legend>Add a stop</legend>
  <p id="stop-help" class="meta"></p>
  <label>Latitude <input id="stop-lat" inputmode="decimal" autocomplete="off" spellcheck="false" required size="11"></label>
  <label>Longitude <input id="stop-lon" inputmode="decimal" autocomplete="off" spellcheck="false" required size="11"></label>
  <label>Title <input id="stop-title" maxlength="80" size="24" required></label>
  <label>Clue <input id="stop-clue" maxlength="500" size="30"></label>
  <label>Radius (m) <input id="stop-radius" type="number" min="5" max="1000" step="1" value="30" required></label>
  <label>Points <input id="stop-points" type="number" min="0" max="10000" step="1" value="10" required></label>
  <label>Proof <select id="stop-proof">
    <option value="place">being there</option>
    <option value="code">a code found there</option>
    <option value="photo">a photo (reviewed)</option>
  </select></label>
  <label id="stop-code-field" hidden>Code <input id="stop-code" minlength="4" maxlength="64" autocomplete="off" autocapitalize="off" spellcheck="false"></label>
  <label><input id="stop-hidden" type="checkbox"> Hidden until found</label>
  <button id="stop-button" type="submit">Add stop</button>
</fieldset>
</form>
<h3>Stops</h3>
<p id="no-stops" class="meta">No stop yet.</p>
<ol id="stops" class="stops"></ol>
</div>
<aside class="side">
<form id="hint-form">
<fieldset id="hint-fieldset">
  <legend>Send a hint (while it runs)</legend>
  <label>Hint <input id="hint-text" maxlength="500" size="28" required></label>
  <button id="hint-button" type="submit">Send</button>
</fieldset>
</form>
<ul id="hints" class="hints"></ul>
<h3>Leaderboard</h3>
<table id="leaderboard">
<thead><tr><th scope="col">#</th><th scope="col">Player</th><th scope="col">Points</th><th scope="col">Stops</th></tr></thead>
<tbody id="leaderboard-rows"></tbody>
</table>
<h3>Check-ins to review <button id="review-refresh" type="button" class="small">Refresh</button></h3>
<p id="no-reviews" class="meta">Nothing waits for a review.</p>
<ul id="reviews" class="plain"></ul>
</aside>
</div>
</div>
<section id="qr-section" aria-labelledby="sheet-heading">
<h2 id="sheet-heading" class="no-print">QR codes of the code stops <button id="print-button" type="button" class="small">Print</button></h2>
<p class="meta no-print">Print this and put each code at its stop: players scan it (or read it) and type it when they check in. The server keeps codes only hashed: this browser knows those typed here, and a code typed in another browser is typed again here to print it.</p>
<h2 id="sheet-title" class="print-only"></h2>
<p id="no-codes" class="meta no-print">No stop of this hunt needs a code.</p>
<div id="sheet" class="sheet"></div>
</section>
</section>
<script src="/vendor/leaflet/leaflet.min.js"></script>
<script type="module" src="/host.js"></script>
</body>
</html>
"""#

    /// `/hunts.css`, both pages' style sheet (with the print layout of the QR sheet).
    static let style = #"""
body { font: 16px/1.4 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem; color: #111; background: #fff; }
/* The hunt in play comes first, right under the header (its map near the top on a phone); the
   account, joining and scores follow. */
body { display: flex; flex-direction: column; }
body > header { order: 0; }
body > #hunt-section { order: 1; }
body > section { order: 2; }
input, select, fieldset { max-width: 100%; box-sizing: border-box; }
fieldset { min-width: 0; }
.goto { margin: 0 0 .4rem; }
.goto label { margin-right: .3rem; }
h1 { font-size: 1.4rem; margin: 0 0 .3rem; }
h2 { font-size: 1.2rem; margin: 1rem 0 .4rem; }
h3 { font-size: 1.05rem; margin: 1rem 0 .4rem; }
fieldset { border: 1px solid #888; border-radius: 6px; margin: 0 0 .8rem; padding: .5rem .8rem; }
fieldset:disabled { opacity: .6; }
legend { font-weight: 600; padding: 0 .3rem; }
label { display: inline-block; margin: .2rem .6rem .2rem 0; }
input, select { font: inherit; padding: .25rem .4rem; border: 1px solid #555; border-radius: 4px; }
input[type=number] { width: 6.5rem; }
input[type=checkbox] { padding: 0; }
button { font: inherit; padding: .3rem .8rem; border: 1px solid #1a4d8f; border-radius: 4px; background: #1a4d8f; color: #fff; cursor: pointer; }
button:disabled { background: #888; border-color: #888; cursor: default; }
button.small { font-size: .85rem; padding: .1rem .5rem; }
button.link { background: none; border: none; color: #1a4d8f; text-decoration: underline; padding: 0; }
button:focus, input:focus, select:focus { outline: 3px solid #f5a623; outline-offset: 1px; }
[hidden] { display: none !important; }
#status { min-height: 1.4em; margin: 0 0 .5rem; color: #1a4d8f; }
#status.error { color: #a00000; }
.meta { color: #444; font-size: .85rem; }
.columns { display: flex; flex-wrap: wrap; gap: 0 1rem; }
.layout { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
.main { flex: 3 1 28rem; min-width: 0; }
.side { flex: 1 1 16rem; }
#map { height: 26rem; border: 1px solid #888; border-radius: 6px; }
@media (max-width: 40rem) {
  body { padding: .5rem; }
  #map { height: 55vh; }
  .main, .side { flex-basis: 100%; }
  label { display: block; margin: .2rem 0; }
  .goto label, label:has(> input[type=checkbox]) { display: inline-block; }
}
.leaflet-container { font: 13px/1.3 system-ui, sans-serif; }
.leaflet-control-scale-line { background: rgba(255, 255, 255, .85); }
.result { margin: .2rem 0 .8rem; padding: .5rem .8rem; border-radius: 6px; border-left: 6px solid transparent; }
.result:empty { display: none; }
.result.ok { background: #e3f4e8; border-color: #1b7a3a; }
.result.pending, .result.working { background: #eef3fa; border-color: #1a4d8f; }
.result.error { background: #fde8e6; border-color: #a00000; }
.result.too-far { background: #fde8e6; border-color: #a00000; font-weight: 600; font-size: 1.1rem; }
ol.stops { list-style: none; padding-left: 0; }
ol.stops li { margin: 0 0 .5rem; }
ol.stops li.found strong { color: #1b7a3a; }
.clue { font-style: italic; }
ul.plain, ul.hints, ul.activity { list-style: none; padding: 0; margin: 0; }
ul.hints li { background: #fff6d5; border-radius: 4px; padding: .3rem .5rem; margin: 0 0 .3rem; }
ul.activity li { font-size: .9rem; border-bottom: 1px solid #eee; padding: .2rem 0; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .2rem .4rem; border-bottom: 1px solid #ddd; }
td.points, td.found, td.rank { text-align: right; }
tr.me { background: #fff6d5; font-weight: 600; }
.score { font-weight: 600; }
.code { font-family: ui-monospace, monospace; font-size: 1.2rem; letter-spacing: .1em; }
li.review { border: 1px solid #ccc; border-radius: 6px; padding: .4rem .6rem; margin: 0 0 .5rem; }
li.review .actions input[type=number] { width: 5rem; }
li.review .photo img { max-width: 100%; max-height: 20rem; margin-top: .4rem; }
label.inline { margin: 0 .2rem 0 .4rem; }
.sheet { display: flex; flex-wrap: wrap; gap: 1rem; }
.qr-card { margin: 0; padding: .5rem; border: 1px dashed #999; width: 14rem; text-align: center; break-inside: avoid; }
.qr-card img.qr { width: 100%; height: auto; }
.qr-card .missing { font-size: .85rem; color: #a00000; }
.print-only { display: none; }
@media print {
  .no-print, #account, header { display: none !important; }
  .print-only { display: block; }
  body { max-width: none; padding: 0; }
  .qr-card { border: 1px dashed #999; width: 30%; }
}
"""#
}
