/// The hunt pages' scripts: `/hunts.js` (shared), `/play.js` and `/host.js`.
extension HuntPages {
    /// `/hunts.js`, an ES module: the client (scavenger.js from `/client.js`), the session, the
    /// leaderboard, the map (tiles or grid).
    static let commonScript = #"""
// Shared by the player's page (/play) and the host's view (/host), an ES module: the client of
// the line protocol (scavenger.js, /client.js: one WebSocket kept open across drops, the session
// resumed with AUTH, writes sent with REQUEST keys, watches re-issued), the signed-in session, the
// map, and small helpers that build elements. Every text that came from the server is put in the
// page with textContent, never as markup.
import { ScavengerClient, ScavengerError, quote } from "/client.js";

export const Hunts = (() => {
  const statusLine = document.getElementById("status");
  const TOKEN_KEY = "scavenger.token";
  const client = new ScavengerClient({ token: localStorage.getItem(TOKEN_KEY), connect: false });

  function say(text, kind) {
    statusLine.textContent = text;
    statusLine.className = kind || "";
  }

  // Sends one request line: resolves with the JSON of OK, rejects with a ScavengerError (its
  // `code`, `detail`: the rest of the line, `retryAfter` for RATE_LIMITED). Writes carry a
  // REQUEST key, and a request whose connection dropped is sent again once it is back.
  function request(line) { return client.call(line); }

  // ---- the session: signed in with LOGIN or REGISTER, or resumed with AUTH by the client with
  // the token kept in localStorage (again after each reconnection, without bothering the page).
  let user = null;
  const signedInHandlers = [];

  function showUser() {
    const who = document.getElementById("who");
    who.textContent = user ? "Signed in as " + user.name : "Not signed in.";
    document.getElementById("account-forms").hidden = !!user;
    document.getElementById("logout-button").hidden = !user;
  }

  async function signedIn(answer) {
    user = answer.user;
    showUser();
    for (const handler of signedInHandlers) await handler(user);
  }

  client.on("status", (status) => {
    if (status === "connected") say("Connected.");
    else if (status === "disconnected") say("Disconnected; reconnecting…", "error");
  });

  client.on("session", ({ user: sessionUser, token, automatic, restored }) => {
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
    // The token resumed on the first connection signs the page in; after a reconnection the
    // session simply goes on (the watches are re-issued by the client).
    if (sessionUser && automatic && !restored && !user) signedIn({ user: sessionUser }).catch((error) => say(error.detail || error.message, "error"));
    if (!sessionUser) { user = null; showUser(); }
  });

  function formValue(id) { return document.getElementById(id).value; }

  function setUpAccountForms() {
    document.getElementById("login-form").addEventListener("submit", async (submit) => {
      submit.preventDefault();
      try {
        await signedIn(await request(`LOGIN ${quote(formValue("login-name"))} ${quote(formValue("login-password"))}`));
        document.getElementById("login-password").value = "";
        say("Signed in.");
      } catch (error) { say(error.detail || error.message, "error"); }
    });
    document.getElementById("register-form").addEventListener("submit", async (submit) => {
      submit.preventDefault();
      try {
        await signedIn(await request(`REGISTER ${quote(formValue("register-name"))} ${quote(formValue("register-email"))} ${quote(formValue("register-password"))}`));
        document.getElementById("register-password").value = "";
        say("Account created; signed in.");
      } catch (error) { say(error.detail || error.message, "error"); }
    });
    document.getElementById("logout-button").addEventListener("click", async () => {
      try { await request("LOGOUT"); } catch (error) { /* the token is dropped here anyway */ }
      localStorage.removeItem(TOKEN_KEY);
      location.reload();
    });
  }

  // ---- elements built from data, text only.
  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function button(label, onClick, className) {
    const node = element("button", className, label);
    node.type = "button";
    node.addEventListener("click", onClick);
    return node;
  }

  function when(time) {
    if (!time) return "";
    const date = new Date(time);
    return isNaN(date) ? String(time) : date.toLocaleString();
  }

  // "52.52, 13.405", "52.52 13.405" or "52.52;13.405" as [lat, lon]; null when it is not two
  // numbers within -90…90 and -180…180.
  function parseCoordinates(text) {
    const parts = String(text).trim().split(/\s*[,; ]\s*/).filter((part) => part !== "");
    if (parts.length !== 2) return null;
    const [lat, lon] = parts.map((part) => /^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(part) ? Number(part) : NaN);
    if (!(Math.abs(lat) <= 90) || !(Math.abs(lon) <= 180)) return null;
    return [lat, lon];
  }

  // "1 point", "3 points".
  function count(number, noun) { return `${number} ${noun}${number === 1 ? "" : "s"}`; }

  function huntState(hunt) {
    const parts = [hunt.state];
    if (hunt.state === "scheduled" && hunt.starts) parts.push("starts " + when(hunt.starts));
    if (hunt.state !== "ended" && hunt.ends) parts.push("ends " + when(hunt.ends));
    if (hunt.ordered) parts.push("stops in order");
    parts.push(hunt.stops + (hunt.stops === 1 ? " stop" : " stops"));
    parts.push(hunt.players + (hunt.players === 1 ? " player" : " players"));
    return parts.join(" · ");
  }

  // ---- the leaderboard, kept from LEADERBOARD and updated by `score` events.
  class Leaderboard {
    constructor(tbody) { this.tbody = tbody; this.entries = new Map(); }
    reset(entries) {
      this.entries = new Map();
      for (const entry of entries) this.entries.set(entry.player, entry);
      this.render();
    }
    // Answers whether the entry is a player the board did not have (one who just joined).
    update(entry) {
      const joined = !this.entries.has(entry.player);
      this.entries.set(entry.player, entry);
      this.render();
      return joined;
    }
    get size() { return this.entries.size; }
    render() {
      const rows = [...this.entries.values()].sort((a, b) =>
        a.rank - b.rank || b.points - a.points || (a.player < b.player ? -1 : a.player > b.player ? 1 : 0));
      this.tbody.replaceChildren(...rows.map((entry) => {
        const row = element("tr");
        row.dataset.player = entry.player;
        if (user && entry.player === Hunts.myName) row.className = "me";
        row.append(element("td", "rank", entry.rank), element("td", "player", entry.player),
          element("td", "points", entry.points), element("td", "found", entry.found));
        return row;
      }));
    }
  }

  // ---- the map: Leaflet over OpenStreetMap's tiles when they can be reached, else a plain grid.
  // The grid: each 256-pixel tile drawn on a canvas, lines every quarter tile, the latitude and
  // longitude of each tile's corner; the scale bar gives the distances.
  const GridLayer = L.GridLayer.extend({
    createTile(coords) {
      const tile = document.createElement("canvas");
      const size = this.getTileSize();
      tile.width = size.x;
      tile.height = size.y;
      const context = tile.getContext("2d");
      context.fillStyle = "#f3f1ea";
      context.fillRect(0, 0, size.x, size.y);
      context.strokeStyle = "#dcd6c8";
      context.lineWidth = 1;
      context.beginPath();
      for (let i = 1; i < 4; i++) {
        const at = Math.round(i * size.x / 4) + 0.5;
        context.moveTo(at, 0); context.lineTo(at, size.y);
        context.moveTo(0, at); context.lineTo(size.x, at);
      }
      context.stroke();
      context.strokeStyle = "#a69d88";
      context.strokeRect(0.5, 0.5, size.x, size.y);
      const corner = this._map.unproject(coords.scaleBy(size), coords.z);
      context.fillStyle = "#6b6456";
      context.font = "11px sans-serif";
      context.fillText(corner.lat.toFixed(4) + ", " + L.Util.wrapNum(corner.lng, [-180, 180], true).toFixed(4), 4, 13);
      return tile;
    },
  });

  const TILE_URL = "https://tile.openstreetmap.org/{z}/{x}/{y}.png";
  // OpenStreetMap's tile servers ask for a Referer: the page's policy sends none, so each tile
  // image asks for one of its own (the origin only).
  const OSMLayer = L.TileLayer.extend({
    createTile(coords, done) {
      const tile = document.createElement("img");
      tile.referrerPolicy = "strict-origin-when-cross-origin";
      tile.alt = "";
      tile.onload = () => done(null, tile);
      tile.onerror = (error) => done(error, tile);
      tile.src = this.getTileUrl(coords);
      return tile;
    },
  });

  function makeMap(elementID, note) {
    const map = L.map(elementID, { center: [20, 0], zoom: 2, worldCopyJump: true });
    const grid = new GridLayer({ className: "grid-layer" }).addTo(map);
    L.control.scale({ imperial: false, maxWidth: 150 }).addTo(map);
    map.attributionControl.setPrefix("Leaflet");
    const noteLine = document.getElementById(note);
    noteLine.textContent = "Map: a plain grid (OpenStreetMap's tiles cannot be reached from here); the scale bar gives distances.";
    // One tile tells whether OpenStreetMap answers; only then does the map use its tiles.
    const probe = new Image();
    probe.referrerPolicy = "strict-origin-when-cross-origin";
    probe.onload = () => {
      new OSMLayer(TILE_URL, {
        maxZoom: 19,
        attribution: '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors',
      }).addTo(map);
      map.removeLayer(grid);
      noteLine.textContent = "Map: OpenStreetMap.";
      document.getElementById(elementID).dataset.tiles = "osm";
    };
    probe.src = TILE_URL.replace("{z}/{x}/{y}", "0/0/0");
    document.getElementById(elementID).dataset.tiles = "grid";
    return map;
  }

  // A tooltip's content as an element: Leaflet would take a string as HTML.
  function label(text) { return element("span", null, text); }

  // Starts the page: `onSignedIn` runs after each sign-in, and once for the session the stored
  // token resumed when the page opened (a reconnection resumes it without running it again).
  function start({ onSignedIn }) {
    if (onSignedIn) signedInHandlers.push(onSignedIn);
    setUpAccountForms();
    showUser();
    client.connect();
  }

  // Watches a hunt (WATCH HUNT), closing the watch `previous`: the client routes the hunt's
  // events to `onEvent`, and after a reconnection re-issues the watch and sends
  // `{type: "resync"}`, for the page to read the hunt again (events may have been missed).
  async function watchHunt(id, previous, onEvent) {
    if (previous) previous.close();
    const watch = client.watchHunt(id, { onEvent });
    await watch.ready;
    return watch;
  }

  return {
    say, quote, request, start, watchHunt, element, button, when, huntState, parseCoordinates, count, Leaderboard, makeMap, label,
    client, ProtocolError: ScavengerError, myName: null,
    get user() { return user; },
  };
})();
"""#

    /// `/play.js`: the player's page.
    static let playScript = #"""
import { Hunts } from "/hunts.js";
// The player's page: join a hunt by its code, see its stops on the map, check in where the
// browser says you are, follow the leaderboard and the hints as they come.
(() => {
  const { say, quote, request, element, button, when, huntState, count } = Hunts;
  const HUNT_KEY = "scavenger.play.hunt";
  const map = Hunts.makeMap("map", "map-note");
  const stopLayer = L.layerGroup().addTo(map);
  const positionLayer = L.layerGroup().addTo(map);
  const leaderboard = new Hunts.Leaderboard(document.getElementById("leaderboard-rows"));
  const stopSelect = document.getElementById("checkin-stop");
  const result = document.getElementById("checkin-result");
  let hunt = null;          // the hunt shown
  let stops = new Map();    // its stops the player may see, by id
  let found = new Set();    // the stops the player has found
  let watch = null;         // the hunt's WATCH HUNT (scavenger.js re-issues it after a drop)
  let watchedHunt = null;
  let fitted = false;

  function show(kind, text) {
    result.className = "result " + kind;
    result.textContent = text;
  }

  // ---- the hunts the player plays (HUNTS MINE), to come back to one.
  async function listMine() {
    const list = document.getElementById("my-hunts");
    try {
      const page = await request("HUNTS MINE LIMIT 20");
      const playing = page.hunts.filter((item) => item.code === undefined);
      list.replaceChildren(...playing.map((item) => {
        const row = element("li");
        row.append(button(item.name, () => openHunt(item.id), "link"), element("span", "meta", " " + item.state));
        return row;
      }));
      document.getElementById("my-hunts-section").hidden = playing.length === 0;
    } catch (error) { say(error.detail || error.message, "error"); }
  }

  // ---- scores across hunts: PROFILE, and the ranking around the player (RANKING AROUND), all
  // time or this week; read again after the player's own check-ins and, at most every few
  // seconds, when someone finds a stop.
  let rankingWeek = false;
  let scoresTimer = null;
  async function readScores() {
    try {
      const profile = await request("PROFILE");
      const rank = profile.rank === null ? "not ranked yet" : `rank ${profile.rank}`;
      // Before a first find there is nothing to count ("0 of 0 hunts" said nothing).
      document.getElementById("profile").textContent = profile.hunts_played === 0 && profile.points === 0
        ? "No points yet: find a stop to get on the ranking."
        : `${count(profile.points, "point")}, ${count(profile.stops_found, "stop")} found, `
          + `${profile.hunts_completed} of ${count(profile.hunts_played, "hunt")} completed: ${rank}.`;
      const page = await request(`RANKING${rankingWeek ? " WEEK" : ""} AROUND LIMIT 10`);
      document.getElementById("ranking-note").textContent = page.entries.length === 0
        ? (rankingWeek ? "Nobody has points this week yet (weeks start on Monday, 00:00 UTC)." : "Nobody has points yet.")
        : (rankingWeek ? "This week, from Monday 00:00 UTC" : "All time");
      document.getElementById("ranking-rows").replaceChildren(...page.entries.map((entry) => {
        const row = element("tr");
        row.dataset.player = entry.player;
        if (Hunts.user && entry.player === Hunts.user.name) row.className = "me";
        row.append(element("td", "rank", entry.rank), element("td", "player", entry.player),
          element("td", "points", entry.points), element("td", "found", entry.found));
        return row;
      }));
      document.getElementById("scores-section").hidden = false;
    } catch (error) { say(error.detail || error.message, "error"); }
  }
  function readScoresSoon() {
    if (scoresTimer !== null) return;
    scoresTimer = setTimeout(() => { scoresTimer = null; readScores(); }, 3000);
  }
  for (const [id, week] of [["ranking-all", false], ["ranking-week", true]]) {
    document.getElementById(id).addEventListener("click", () => {
      rankingWeek = week;
      document.getElementById("ranking-all").setAttribute("aria-pressed", String(!week));
      document.getElementById("ranking-week").setAttribute("aria-pressed", String(week));
      readScores();
    });
  }

  // ---- a hunt: HUNT, LEADERBOARD and WATCH HUNT.
  async function openHunt(id) {
    try {
      await readHunt(id);
      const board = await request(`LEADERBOARD ${id} LIMIT 100`);
      leaderboard.reset(board.entries);
      if (!watch || watch.closed || watchedHunt !== id) { watch = await Hunts.watchHunt(id, watch, onEvent); watchedHunt = id; }
      localStorage.setItem(HUNT_KEY, id);
      document.getElementById("hunt-section").hidden = false;
      map.invalidateSize();
      if (!fitted) fitMap();
    } catch (error) {
      if (error.code === "NOT_FOUND") localStorage.removeItem(HUNT_KEY);
      say(error.detail || error.message, "error");
    }
  }

  async function readHunt(id) {
    const answer = await request(`HUNT ${id}`);
    const firstTime = !hunt || hunt.id !== answer.hunt.id;
    hunt = answer.hunt;
    stops = new Map(answer.stops.map((stop) => [stop.id, stop]));
    found = new Set(answer.me ? answer.me.found : []);
    if (firstTime) fitted = false;
    document.getElementById("hunt-name").textContent = hunt.name;
    document.getElementById("hunt-meta").textContent = "Hosted by " + hunt.host + " · " + huntState(hunt);
    document.getElementById("hunt-description").textContent = hunt.description;
    document.getElementById("my-score").textContent = answer.me
      ? `You: ${count(answer.me.points, "point")}, ${answer.me.found.length} of ${count(hunt.stops, "stop")} found, rank ${answer.me.rank}.`
      : "";
    const winners = document.getElementById("winners");
    winners.textContent = answer.winners.length ? "Winners: " + answer.winners.join(", ") : "";
    showHints(answer.hints);
    renderStops();
  }

  function showHints(hints) {
    const list = document.getElementById("hints");
    list.replaceChildren(...hints.slice().reverse().map(hintItem));
    document.getElementById("no-hints").hidden = hints.length > 0;
  }

  function hintItem(hint) {
    const item = element("li");
    item.append(element("span", "hint-text", hint.text), element("span", "meta", " " + when(hint.at)));
    return item;
  }

  function stopName(stop) { return `${stop.n}. ${stop.title}`; }

  function renderStops() {
    const list = document.getElementById("stops");
    const previous = stopSelect.value;
    stopLayer.clearLayers();
    stopSelect.replaceChildren();
    list.replaceChildren();
    const ordered = [...stops.values()].sort((a, b) => a.n - b.n);
    for (const stop of ordered) {
      const isFound = found.has(stop.id);
      const item = element("li", isFound ? "found" : "");
      item.dataset.stop = stop.id;
      item.append(element("strong", null, stopName(stop)));
      const facts = [`${stop.points} points`, `within ${stop.radius_m} m`];
      if (stop.proof === "code") facts.push("needs the code found there");
      if (stop.proof === "photo") facts.push("needs a photo, reviewed by the host");
      facts.push(`found by ${stop.found_by}`);
      if (isFound) facts.unshift("found");
      item.append(element("div", "meta", facts.join(" · ")));
      if (stop.clue) item.append(element("div", "clue", stop.clue));
      if (stop.lat === null) item.append(element("div", "meta", "Hidden: its place shows once you find it."));
      list.append(item);

      const option = element("option", null, stopName(stop) + (isFound ? " (found)" : ""));
      option.value = stop.id;
      option.disabled = isFound;
      stopSelect.append(option);

      if (stop.lat !== null && stop.lon !== null) {
        const color = isFound ? "#1b7a3a" : "#1a4d8f";
        L.circle([stop.lat, stop.lon], { radius: stop.radius_m, color, weight: 2, fillOpacity: 0.12 }).addTo(stopLayer);
        L.circleMarker([stop.lat, stop.lon], { radius: 6, color, fillColor: color, fillOpacity: 0.9 })
          .bindTooltip(Hunts.label(stopName(stop)), { permanent: true, direction: "top", offset: [0, -6] })
          .on("click", () => { if (!isFound) { stopSelect.value = stop.id; updateProofFields(); } })
          .addTo(stopLayer);
      }
    }
    if (stops.has(previous) && !found.has(previous)) stopSelect.value = previous;
    else {
      const next = ordered.find((stop) => !found.has(stop.id));
      if (next) stopSelect.value = next.id;
    }
    if (!ordered.some((stop) => !found.has(stop.id))) {
      const none = element("option", null, stops.size ? "every stop shown is found" : "no stop yet");
      none.value = "";
      none.disabled = true;
      stopSelect.prepend(none);
      stopSelect.value = "";
    }
    document.getElementById("no-stops").hidden = stops.size > 0;
    document.getElementById("no-stops").textContent = hunt.state === "scheduled"
      ? "The stops show when the hunt starts." : "No stop to show.";
    updateProofFields();
  }

  function fitMap() {
    const points = [...stops.values()].filter((stop) => stop.lat !== null).map((stop) => [stop.lat, stop.lon]);
    if (points.length === 0) return;
    map.fitBounds(L.latLngBounds(points).pad(0.5), { maxZoom: 17 });
    fitted = true;
  }

  function updateProofFields() {
    const stop = stops.get(stopSelect.value);
    document.getElementById("code-field").hidden = !stop || stop.proof !== "code";
    document.getElementById("photo-field").hidden = !stop || stop.proof !== "photo";
    document.getElementById("checkin-button").disabled = !stop || hunt.state !== "running";
  }

  // ---- joining.
  document.getElementById("join-form").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    const code = document.getElementById("join-code").value.trim();
    const name = document.getElementById("join-name").value.trim();
    try {
      const answer = await request(`JOIN ${quote(code)}` + (name ? ` AS ${quote(name)}` : ""));
      Hunts.myName = name || Hunts.user.name;
      say(`Joined “${answer.hunt.name}”.`);
      await openHunt(answer.hunt.id);
      listMine();
    } catch (error) {
      say(error.code === "NOT_FOUND" ? "No running or upcoming hunt has that code." : (error.detail || error.message), "error");
    }
  });

  // ---- checking in where the browser says the player is.
  function where() {
    return new Promise((resolve, reject) => {
      if (!navigator.geolocation) { reject(new Error("this browser cannot tell where it is")); return; }
      navigator.geolocation.getCurrentPosition(resolve, reject, { enableHighAccuracy: true, timeout: 60000, maximumAge: 0 });
    });
  }

  function photoBase64(file) {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    });
  }

  // The player's fix on the map; when it is out of view, the map shows it and the stop together.
  function showPosition(coords, stop) {
    positionLayer.clearLayers();
    const at = L.latLng(coords.latitude, coords.longitude);
    if (coords.accuracy > 0) L.circle(at, { radius: coords.accuracy, color: "#b3261e", weight: 1, fillOpacity: 0.08 }).addTo(positionLayer);
    L.circleMarker(at, { radius: 7, color: "#fff", weight: 2, fillColor: "#b3261e", fillOpacity: 1 })
      .bindTooltip(Hunts.label("You"), { permanent: true, direction: "bottom", offset: [0, 6] }).addTo(positionLayer);
    if (!map.getBounds().contains(at)) {
      const points = [at];
      if (stop.lat !== null) points.push([stop.lat, stop.lon]);
      map.fitBounds(L.latLngBounds(points).pad(0.3), { maxZoom: 17 });
    }
  }

  document.getElementById("checkin-form").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    const stop = stops.get(stopSelect.value);
    if (!stop) return;
    const checkinButton = document.getElementById("checkin-button");
    checkinButton.disabled = true;
    show("working", "Finding where you are…");
    try {
      let position;
      try {
        position = await where();
      } catch (error) {
        show("error", "Your location is not available: " + error.message + ". Allow this page to use your location and try again.");
        return;
      }
      const { latitude, longitude, accuracy } = position.coords;
      showPosition(position.coords, stop);
      let line = `CHECKIN ${stop.id} ${latitude.toFixed(6)} ${longitude.toFixed(6)} ACCURACY ${Math.max(0, Math.ceil(accuracy || 0))}`;
      if (stop.proof === "code") {
        const code = document.getElementById("checkin-code").value.trim();
        if (!code) { show("error", "Type the code you found at this stop."); return; }
        line += " CODE " + quote(code);
      } else if (stop.proof !== "code" && accuracy > stop.radius_m) {
        show("error", `Your position is only known to within ${Math.round(accuracy)} m, more than this stop's ${stop.radius_m} m: wait for a better fix (outdoors, location services on) and try again.`);
        return;
      }
      if (stop.proof === "photo") {
        const file = document.getElementById("checkin-photo").files[0];
        if (!file) { show("error", "Take or choose a photo for this stop."); return; }
        line += " PHOTO " + await photoBase64(file);
      }
      show("working", "Checking in…");
      const answer = await request(line);
      const checkin = answer.checkin;
      const standing = `You have ${answer.score.points} points, rank ${answer.score.rank}.`;
      if (checkin.status === "accepted") show("ok", `Checked in at ${stopName(stop)}: +${checkin.points} points. ${standing}`);
      else if (checkin.status === "pending") show("pending", `Checked in at ${stopName(stop)}: waiting for the host to review your photo. ${standing}`);
      else show("pending", `Checked in at ${stopName(stop)}, but flagged for review (you moved faster than anyone walks). ${standing}`);
      document.getElementById("checkin-code").value = "";
      document.getElementById("checkin-photo").value = "";
      await readHunt(hunt.id);
      await readScores();
    } catch (error) {
      showRefusal(error, stop);
    } finally {
      updateProofFields();
    }
  });

  function showRefusal(error, stop) {
    if (!(error instanceof Hunts.ProtocolError)) { show("error", error.message); return; }
    switch (error.code) {
    case "TOO_FAR": {
      const distance = Number(error.detail.split(" ")[0]);
      show("too-far", `Too far: you are ${distance} m from ${stopName(stop)}. Get within ${stop.radius_m} m of it and check in again.`);
      break;
    }
    case "FORBIDDEN":
      show("error", stop.proof === "code" ? "That is not this stop's code." : error.detail);
      break;
    case "RATE_LIMITED":
      show("error", `Too many wrong codes: try again in ${error.detail.split(" ")[0]} s.`);
      break;
    default:
      show("error", error.detail || error.message);
    }
  }

  stopSelect.addEventListener("change", updateProofFields);

  // ---- live: the hunt's events.
  function onEvent(event) {
    if (!hunt) return;
    switch (event.type) {
    case "score":
      // A player new to the board has just joined: the count of players follows.
      if (leaderboard.update(event.entry) && leaderboard.size > hunt.players) {
        hunt.players = leaderboard.size;
        document.getElementById("hunt-meta").textContent = "Hosted by " + hunt.host + " · " + huntState(hunt);
      }
      // The player's own line follows their entry (a rival passing them moves their rank).
      if (event.entry.player === Hunts.myName) {
        document.getElementById("my-score").textContent =
          `You: ${count(event.entry.points, "point")}, ${event.entry.found} of ${count(hunt.stops, "stop")} found, rank ${event.entry.rank}.`;
      }
      break;
    case "found": {
      const stop = stops.get(event.stop);
      if (stop) { stop.found_by += 1; renderStops(); }
      activity(`${event.player} found ${stop ? stopName(stop) : "a stop"} (+${event.points})`);
      readScoresSoon();
      break;
    }
    case "hint":
      document.getElementById("hints").prepend(hintItem(event));
      document.getElementById("no-hints").hidden = true;
      activity("New hint: " + event.text);
      break;
    case "hunt": {
      const changed = event.hunt.state !== hunt.state;
      hunt = Object.assign(hunt, event.hunt);
      if (changed) {
        activity(event.hunt.state === "running" ? "The hunt has started." : event.hunt.state === "ended" ? "The hunt has ended." : "The hunt changed.");
        readHunt(hunt.id).then(() => { if (!fitted) fitMap(); }).catch((error) => say(error.message, "error"));
      } else {
        document.getElementById("hunt-meta").textContent = "Hosted by " + hunt.host + " · " + huntState(hunt);
      }
      break;
    }
    case "resync":   // the watch was re-issued (a reconnection, an overflow): read the hunt again
      openHunt(hunt.id);
      break;
    }
  }

  function activity(text) {
    const list = document.getElementById("activity");
    list.prepend(element("li", null, `${new Date().toLocaleTimeString()} ${text}`));
    while (list.children.length > 30) list.lastChild.remove();
  }

  Hunts.start({
    onEvent,
    onSignedIn: async (user) => {
      Hunts.myName = Hunts.myName || user.name;
      document.getElementById("join-section").hidden = false;
      await readScores();
      await listMine();
      const id = localStorage.getItem(HUNT_KEY);
      if (id) await openHunt(id);
    },
  });
})();
"""#

    /// `/host.js`: the host's view.
    static let hostScript = #"""
import { Hunts } from "/hunts.js";
// The host's view: create a hunt, place its stops by clicking the map, start it, send hints,
// review photo and flagged check-ins, and print the QR codes of its code stops.
//
// The daemon keeps a stop's code only hashed: this browser keeps the codes it typed (in
// localStorage, by stop id) and has the daemon draw them (POST /qr, the code in the body).
(() => {
  const { say, quote, request, element, button, when, huntState, count } = Hunts;
  const HUNT_KEY = "scavenger.host.hunt";
  const CODES_KEY = "scavenger.host.codes";
  const VIEW_KEY = "scavenger.host.view";
  const map = Hunts.makeMap("map", "map-note");
  // The area the host last looked at (kept as the map moves): where the map opens next time,
  // rather than on the whole world when the browser gives no location.
  const savedView = (() => {
    try {
      const view = JSON.parse(localStorage.getItem(VIEW_KEY) || "null");
      return view && Math.abs(view.lat) <= 90 && Math.abs(view.lon) <= 180 && view.zoom >= 0 ? view : null;
    } catch (error) { return null; }
  })();
  if (savedView) map.setView([savedView.lat, savedView.lon], savedView.zoom);
  map.on("moveend", () => {
    const center = map.getCenter().wrap();
    localStorage.setItem(VIEW_KEY, JSON.stringify({ lat: center.lat, lon: center.lng, zoom: map.getZoom() }));
  });
  const stopLayer = L.layerGroup().addTo(map);
  const draftLayer = L.layerGroup().addTo(map);
  const leaderboard = new Hunts.Leaderboard(document.getElementById("leaderboard-rows"));
  let hunt = null;
  let stops = [];
  let watch = null;         // the hunt's WATCH HUNT (scavenger.js re-issues it after a drop)
  let watchedHunt = null;
  let located = false;

  function field(id) { return document.getElementById(id); }

  function codes() {
    try { return JSON.parse(localStorage.getItem(CODES_KEY) || "{}"); } catch (error) { return {}; }
  }

  function keepCode(stopID, code) {
    const all = codes();
    all[stopID] = code;
    localStorage.setItem(CODES_KEY, JSON.stringify(all));
  }

  // ---- the hunts this user hosts.
  async function listMine() {
    try {
      const page = await request("HUNTS MINE LIMIT 50");
      const hosted = page.hunts.filter((item) => item.code !== undefined);
      field("my-hunts").replaceChildren(...hosted.map((item) => {
        const row = element("li");
        row.append(button(item.name, () => openHunt(item.id), "link"), element("span", "meta", " " + item.state));
        return row;
      }));
      field("no-hunts").hidden = hosted.length > 0;
    } catch (error) { say(error.detail || error.message, "error"); }
  }

  field("create-form").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    let line = "CREATEHUNT " + quote(field("create-name").value.trim());
    const description = field("create-description").value.trim();
    if (description) line += " DESCRIPTION " + quote(description);
    if (field("create-ordered").checked) line += " ORDERED";
    if (field("create-public").checked) line += " PUBLIC";
    const minutes = field("create-duration").value;
    if (minutes) line += " DURATION " + Math.round(Number(minutes) * 60);
    try {
      const answer = await request(line);
      say(`Created “${answer.hunt.name}”. Click the map to place its stops.`);
      field("create-form").reset();
      await openHunt(answer.hunt.id);
      listMine();
    } catch (error) { say(error.detail || error.message, "error"); }
  });

  // ---- one hunt.
  async function openHunt(id) {
    try {
      await readHunt(id);
      leaderboard.reset((await request(`LEADERBOARD ${id} LIMIT 100`)).entries);
      if (!watch || watch.closed || watchedHunt !== id) { watch = await Hunts.watchHunt(id, watch, onEvent); watchedHunt = id; }
      localStorage.setItem(HUNT_KEY, id);
      field("hunt-section").hidden = false;
      map.invalidateSize();
      fitMap();
      await readReviews();
    } catch (error) {
      if (error.code === "NOT_FOUND") localStorage.removeItem(HUNT_KEY);
      say(error.detail || error.message, "error");
    }
  }

  async function readHunt(id) {
    const answer = await request(`HUNT ${id}`);
    hunt = answer.hunt;
    stops = answer.stops.slice().sort((a, b) => a.n - b.n);
    field("hunt-name").textContent = hunt.name;
    field("hunt-code").textContent = hunt.code || "";
    field("hunt-meta").textContent = huntState(hunt);
    field("hunt-description").textContent = hunt.description;
    field("winners").textContent = answer.winners.length ? "Winners: " + answer.winners.join(", ") : "";
    const scheduled = hunt.state === "scheduled";
    field("start-button").disabled = !scheduled;
    field("end-button").disabled = hunt.state === "ended";
    field("stop-fieldset").disabled = !scheduled;
    field("stop-help").textContent = scheduled
      ? "Click the map where a stop is (or type its latitude and longitude), then describe it and add it."
      : "Stops can be added and removed only before the hunt starts.";
    field("hint-fieldset").disabled = hunt.state !== "running";
    const hints = field("hints");
    hints.replaceChildren(...answer.hints.slice().reverse().map((hint) => {
      const item = element("li");
      item.append(element("span", "hint-text", hint.text), element("span", "meta", " " + when(hint.at)));
      return item;
    }));
    renderStops();
    renderSheet();
  }

  function stopName(stop) { return `${stop.n}. ${stop.title}`; }

  function renderStops() {
    stopLayer.clearLayers();
    const list = field("stops");
    list.replaceChildren();
    for (const stop of stops) {
      const item = element("li");
      item.dataset.stop = stop.id;
      item.append(element("strong", null, stopName(stop)));
      const facts = [`${stop.points} points`, `radius ${stop.radius_m} m`, `proof: ${stop.proof}`, `found by ${stop.found_by}`,
        `${stop.lat.toFixed(5)}, ${stop.lon.toFixed(5)}`];
      item.append(element("div", "meta", facts.join(" · ")));
      if (stop.clue) item.append(element("div", "clue", stop.clue));
      if (hunt.state === "scheduled") item.append(button("Remove", () => removeStop(stop), "small"));
      list.append(item);
      L.circle([stop.lat, stop.lon], { radius: stop.radius_m, color: "#1a4d8f", weight: 2, fillOpacity: 0.12 }).addTo(stopLayer);
      L.circleMarker([stop.lat, stop.lon], { radius: 6, color: "#1a4d8f", fillColor: "#1a4d8f", fillOpacity: 0.9 })
        .bindTooltip(Hunts.label(stopName(stop)), { permanent: true, direction: "top", offset: [0, -6] })
        .addTo(stopLayer);
    }
    field("no-stops").hidden = stops.length > 0;
  }

  function fitMap() {
    if (stops.length > 0) {
      map.fitBounds(L.latLngBounds(stops.map((stop) => [stop.lat, stop.lon])).pad(0.5), { maxZoom: 17 });
    } else if (!located && !savedView && navigator.geolocation) {
      // A new hunt and no area used before: start where the host is, when the browser says so.
      navigator.geolocation.getCurrentPosition((position) => {
        located = true;
        if (stops.length === 0) map.setView([position.coords.latitude, position.coords.longitude], 16);
      }, () => {}, { timeout: 20000 });
    }
  }

  async function removeStop(stop) {
    try {
      await request(`REMOVESTOP ${stop.id}`);
      say(`Removed ${stopName(stop)}.`);
      await readHunt(hunt.id);
    } catch (error) { say(error.detail || error.message, "error"); }
  }

  // ---- going to a place typed as "latitude, longitude".
  field("goto-form").addEventListener("submit", (submit) => {
    submit.preventDefault();
    const place = Hunts.parseCoordinates(field("goto-place").value);
    if (!place) {
      say("Type a place as latitude, longitude in degrees, e.g. 52.5200, 13.4050 (latitude within ±90, longitude within ±180).", "error");
      return;
    }
    map.setView(place, Math.max(map.getZoom(), 16));
    say(`The map shows ${place[0]}, ${place[1]}.`);
  });

  // ---- placing a stop: a click on the map gives its place, or it is typed in the fields.
  // The typed place, or null (with the fields marked) when they are not a latitude and longitude.
  function draftPlace() {
    const lat = field("stop-lat"), lon = field("stop-lon");
    const place = Hunts.parseCoordinates(lat.value + "," + lon.value);
    lat.setCustomValidity(place || !lat.value ? "" : "a latitude in degrees, within ±90");
    lon.setCustomValidity(place || !lon.value ? "" : "a longitude in degrees, within ±180");
    return place;
  }

  function drawDraft() {
    draftLayer.clearLayers();
    const place = draftPlace();
    if (!place) return;
    const [lat, lon] = place;
    const radius = Number(field("stop-radius").value) || 0;
    L.circle([lat, lon], { radius, color: "#b3261e", weight: 2, dashArray: "4 4", fillOpacity: 0.1 }).addTo(draftLayer);
    L.circleMarker([lat, lon], { radius: 6, color: "#b3261e", fillColor: "#b3261e", fillOpacity: 0.9 }).addTo(draftLayer);
  }

  map.on("click", (click) => {
    if (!hunt || hunt.state !== "scheduled") return;
    const at = click.latlng.wrap();
    field("stop-lat").value = at.lat.toFixed(6);
    field("stop-lon").value = at.lng.toFixed(6);
    drawDraft();
    field("stop-title").focus();
  });
  field("stop-radius").addEventListener("input", drawDraft);
  // A place typed in the fields: drawn, and brought into view.
  for (const id of ["stop-lat", "stop-lon"]) {
    field(id).addEventListener("change", () => {
      drawDraft();
      const place = draftPlace();
      if (place && !map.getBounds().contains(place)) map.setView(place, Math.max(map.getZoom(), 16));
    });
  }
  field("stop-proof").addEventListener("change", () => {
    field("stop-code-field").hidden = field("stop-proof").value !== "code";
  });

  field("stop-form").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    const place = draftPlace();
    if (!place) {
      say(field("stop-lat").value || field("stop-lon").value
        ? "The stop's place must be a latitude within ±90 and a longitude within ±180, in degrees."
        : "Click the map where the stop is, or type its latitude and longitude.", "error");
      return;
    }
    const [lat, lon] = place;
    const proof = field("stop-proof").value;
    const code = field("stop-code").value.trim();
    let line = `ADDSTOP ${hunt.id} ${lat} ${lon} ${field("stop-radius").value} ${field("stop-points").value} ${quote(field("stop-title").value.trim())}`;
    const clue = field("stop-clue").value.trim();
    if (clue) line += " CLUE " + quote(clue);
    line += " PROOF " + proof;
    if (proof === "code") line += " CODE " + quote(code);
    if (field("stop-hidden").checked) line += " HIDDEN";
    try {
      const answer = await request(line);
      if (proof === "code") keepCode(answer.stop.id, code);
      say(`Added ${stopName(answer.stop)}.`);
      for (const id of ["stop-title", "stop-clue", "stop-code", "stop-lat", "stop-lon"]) field(id).value = "";
      field("stop-hidden").checked = false;
      draftLayer.clearLayers();
      await readHunt(hunt.id);
    } catch (error) { say(error.detail || error.message, "error"); }
  });

  // ---- running it.
  field("start-button").addEventListener("click", async () => {
    try {
      await request(`STARTHUNT ${hunt.id}`);
      say("The hunt has started.");
      await readHunt(hunt.id);
      await listMine();
    } catch (error) { say(error.detail || error.message, "error"); }
  });

  field("end-button").addEventListener("click", async () => {
    if (!confirm("End this hunt for everyone now?")) return;
    try {
      await request(`ENDHUNT ${hunt.id}`);
      say("The hunt has ended.");
      await readHunt(hunt.id);
      await listMine();
    } catch (error) { say(error.detail || error.message, "error"); }
  });

  field("hint-form").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    try {
      await request(`HINT ${hunt.id} ${quote(field("hint-text").value.trim())}`);
      field("hint-text").value = "";
      say("Hint sent.");
      await readHunt(hunt.id);
    } catch (error) { say(error.detail || error.message, "error"); }
  });

  // ---- review: pending (photo) and flagged check-ins.
  async function readReviews() {
    const list = field("reviews");
    try {
      const page = await request(`REVIEW ${hunt.id} LIMIT 50`);
      list.replaceChildren(...page.checkins.map(reviewItem));
      field("no-reviews").hidden = page.checkins.length > 0;
    } catch (error) { say(error.detail || error.message, "error"); }
  }

  function reviewItem(checkin) {
    const stop = stops.find((item) => item.id === checkin.stop);
    const item = element("li", "review");
    item.dataset.checkin = checkin.id;
    item.append(element("strong", null, `${checkin.player} at ${stop ? stopName(stop) : checkin.stop}`));
    item.append(element("div", "meta", `${checkin.status} · ${Math.round(checkin.distance_m)} m from the stop · ${when(checkin.at)}`));
    const actions = element("div", "actions");
    const bonus = element("input");
    bonus.type = "number"; bonus.min = "0"; bonus.max = "10000"; bonus.value = "0";
    bonus.setAttribute("aria-label", "Bonus points");
    const note = element("input");
    note.placeholder = "Note (optional)";
    note.setAttribute("aria-label", "Note for a rejection");
    actions.append(
      button("Approve", async () => {
        const extra = Number(bonus.value) > 0 ? ` BONUS ${Math.round(Number(bonus.value))}` : "";
        await decide(`APPROVE ${checkin.id}${extra}`, "Approved.");
      }),
      element("label", "inline", "bonus "), bonus,
      button("Reject", () => decide(`REJECT ${checkin.id}` + (note.value.trim() ? " NOTE " + quote(note.value.trim()) : ""), "Rejected.")),
      note);
    if (checkin.photo) {
      const holder = element("div", "photo");
      actions.append(button("Show photo", async () => {
        try {
          const photo = await request(`PHOTO ${checkin.id}`);
          if (!/^image\/(jpeg|png|gif|webp)$/.test(photo.mime) || !/^[A-Za-z0-9+/=]+$/.test(photo.data)) throw new Error("not an image");
          const image = element("img");
          image.alt = `Photo by ${checkin.player}`;
          image.src = `data:${photo.mime};base64,${photo.data}`;
          holder.replaceChildren(image);
        } catch (error) { say(error.detail || error.message, "error"); }
      }));
      item.append(actions, holder);
    } else {
      item.append(actions);
    }
    return item;
  }

  async function decide(line, done) {
    try {
      await request(line);
      say(done);
      await readReviews();
      await readHunt(hunt.id);
    } catch (error) { say(error.detail || error.message, "error"); }
  }

  field("review-refresh").addEventListener("click", readReviews);

  // ---- the printable sheet: a QR code per code stop, drawn by the daemon.
  async function renderSheet() {
    const sheet = field("sheet");
    const kept = codes();
    const codeStops = stops.filter((stop) => stop.proof === "code");
    field("sheet-title").textContent = hunt.name;
    field("no-codes").hidden = codeStops.length > 0;
    const cards = [];
    for (const stop of codeStops) {
      const card = element("figure", "qr-card");
      card.dataset.stop = stop.id;
      const code = kept[stop.id];
      if (code) {
        try {
          const response = await fetch("/qr", {
            method: "POST", headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ text: code, title: stopName(stop) }), cache: "no-store",
          });
          if (!response.ok) throw new Error(await response.text());
          const svg = await response.text();
          const image = element("img", "qr");
          image.alt = `QR code of ${stopName(stop)}`;
          image.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svg);
          card.append(image);
        } catch (error) {
          card.append(element("p", "error", "Could not draw this code: " + error.message));
        }
      } else {
        // The server keeps codes only hashed: this browser can print one only once told it.
        card.append(element("p", "missing", "Its code was typed in another browser, and the server cannot give it back: type it again to print it here."));
        const form = element("form", "no-print retype");
        const input = element("input");
        Object.assign(input, { maxLength: 64, minLength: 4, required: true, autocomplete: "off", spellcheck: false });
        input.setAttribute("autocapitalize", "off");
        input.setAttribute("aria-label", `The code of ${stopName(stop)}`);
        const submit = element("button", "small", "Show its QR code");
        submit.type = "submit";
        form.append(input, submit);
        form.addEventListener("submit", (event) => {
          event.preventDefault();
          keepCode(stop.id, input.value.trim());
          renderSheet();
        });
        card.append(form, element("figcaption", null, stopName(stop)));
      }
      cards.push(card);
    }
    sheet.replaceChildren(...cards);
  }

  field("print-button").addEventListener("click", () => window.print());

  // ---- live: the hunt's events.
  function onEvent(event) {
    if (!hunt) return;
    if (event.type === "score") {
      if (leaderboard.update(event.entry) && leaderboard.size > hunt.players) {
        hunt.players = leaderboard.size;
        field("hunt-meta").textContent = huntState(hunt);
      }
    } else if (event.type === "found") {
      const stop = stops.find((item) => item.id === event.stop);
      if (stop) { stop.found_by += 1; renderStops(); }
    } else if (event.type === "hunt" && event.hunt.state !== hunt.state) {
      // Started or ended (by its times, or elsewhere): the hunt and the list of hunts say so.
      readHunt(hunt.id).then(listMine).catch((error) => say(error.message, "error"));
    }
    else if (event.type === "resync") openHunt(hunt.id);  // re-issued after a drop: read again
  }

  // For scripts and tests driving the page: its map.
  window.scavengerHost = { map };

  Hunts.start({
    onEvent,
    onSignedIn: async () => {
      field("hunts-section").hidden = false;
      await listMine();
      const id = localStorage.getItem(HUNT_KEY);
      if (id) await openHunt(id);
    },
  });
})();
"""#
}
