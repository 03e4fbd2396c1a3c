import { Hunts } from "/hunts.js";
import { locationNeedsHTTPS } from "/location.js";
import { readScores, readScoresSoon } from "/play-scores.js";
import { setUpGuestJoin } from "/guest-join.js";
import { PinLayer } from "/pin-map.js";
// The player's page: join a hunt by its code, see its stops on the map, check in where the
// browser says you are, follow the leaderboard and the hints as they come. In a team hunt the
// player joins a team by its name, and the page shows their team, its players and a board of
// teams; the standing shown is the team's (a stop counts once per team).
(() => {
  const { say, quote, request, element, button, when, huntState, count, report, reportError, toast, errorText } = Hunts;
  const HUNT_KEY = "scavenger.play.hunt";
  const map = Hunts.makeMap("map", "map-note");
  // The pins around, at any zoom (MAP): cells with counts when zoomed out, photos as thumbnails.
  const pinLayer = new PinLayer(map, Hunts.client, { onError: (error) => console.warn("map: " + error.message) });
  window.scavengerPlay = { map, pinLayer };   // for scripts and tests driving the page
  const stopLayer = L.layerGroup().addTo(map);
  const positionLayer = L.layerGroup().addTo(map);
  const leaderboard = new Hunts.Leaderboard(document.getElementById("leaderboard-rows"));
  const stopSelect = document.getElementById("checkin-stop");
  const result = document.getElementById("checkin-result");
  let hunt = null;          // the hunt shown
  let stops = new Map();    // its stops the player may see, by id
  let found = new Set();    // the stops the player has found
  let pending = new Set();  // the stops whose check-in from this browser waits for a review
  let watch = null;         // the hunt's WATCH HUNT (scavenger.js re-issues it after a drop)
  let watchedHunt = null;
  let fitted = false;
  let trialStart = null;    // in a time trial: when the player's clock started (ms), or null
  let trialTimer = null;

  function show(kind, text) {
    result.className = "result " + kind;
    result.textContent = text;
  }

  // ---- the hunts the player plays (HUNTS MINE), to come back to one; their states follow the
  // clock (a hunt past its end is ended without reading the list again).
  let playing = [];
  async function listMine() {
    try {
      const page = await request("HUNTS MINE LIMIT 20");
      playing = page.hunts.filter((item) => item.code === undefined);
      renderMine();
    } catch (error) { say(errorText(error), "error"); }
  }
  function renderMine() {
    document.getElementById("my-hunts").replaceChildren(...playing.map((item) => {
      const row = element("li");
      row.dataset.hunt = item.id;
      row.append(button(item.name, (click) => openHunt(item.id, click.target), "link"), element("span", "meta state", " " + Hunts.liveState(item)));
      return row;
    }));
    document.getElementById("my-hunts-section").hidden = playing.length === 0;
    Hunts.rerenderAtNextChange("mine", playing, renderMine);
  }

  // ---- a hunt: HUNT, LEADERBOARD and WATCH HUNT.
  async function openHunt(id, anchor) {
    try {
      await readHunt(id);
      const board = await request(`LEADERBOARD ${id} LIMIT 100`);
      leaderboard.reset(board.entries);
      await showTeam();
      if (!watch || watch.closed || watchedHunt !== id) { watch = await Hunts.watchHunt(id, watch, onEvent); watchedHunt = id; }
      localStorage.setItem(HUNT_KEY, id);
      document.getElementById("hunt-section").hidden = false;
      map.invalidateSize();
      if (!fitted) fitMap();
    } catch (error) {
      if (error.code === "NOT_FOUND") localStorage.removeItem(HUNT_KEY);
      if (anchor) reportError(anchor, error); else say(errorText(error), "error");
    }
  }

  async function readHunt(id) {
    const answer = await request(`HUNT ${id}`);
    const firstTime = !hunt || hunt.id !== answer.hunt.id;
    hunt = answer.hunt;
    stops = new Map(answer.stops.map((stop) => [stop.id, stop]));
    found = new Set(answer.me ? answer.me.found : []);
    if (firstTime) {
      fitted = false;
      // Another hunt: what happened in the one shown before is not this one's.
      document.getElementById("activity").replaceChildren();
      document.getElementById("checkin-result").textContent = "";
    }
    readPending();
    // In a team hunt `me` is the player's team's standing, and names the team.
    Hunts.myTeam = answer.me && answer.me.team ? answer.me.team : null;
    leaderboard.setTeams(!!hunt.teams);
    document.getElementById("hunt-name").textContent = hunt.name;
    document.getElementById("hunt-meta").textContent = "Hosted by " + hunt.host + " · " + huntState(hunt);
    document.getElementById("hunt-description").textContent = hunt.description;
    document.getElementById("my-score").textContent = answer.me ? standing(answer.me.points, answer.me.found.length, answer.me.rank) : "";
    if (firstTime) document.getElementById("my-team").hidden = true;
    const winners = document.getElementById("winners");
    winners.textContent = answer.winners.length ? "Winners: " + answer.winners.join(", ") : "";
    showHints(answer.hints);
    renderStops();
    if (firstTime) trialStart = null;
    await readTrialStart(answer.me);
  }

  // "You: 10 points, 1 of 3 stops found, rank 2.", or in a team hunt "Team score: …" (under the
  // line that names the team).
  function standing(points, foundCount, rank) {
    return `${Hunts.myTeam ? "Team score" : "You"}: ${count(points, "point")}, ${foundCount} of ${count(hunt.stops, "stop")} found, rank ${rank}.`;
  }

  // ---- a team hunt: the player's team and its players, from the team's entry on the board
  // (read around the player when the board shown does not reach it).
  async function showTeam() {
    const line = document.getElementById("my-team");
    if (!hunt || !hunt.teams || !Hunts.myTeam) { line.hidden = true; return; }
    let entry = teamEntry();
    if (!entry) {
      try {
        const board = await request(`LEADERBOARD ${hunt.id} LIMIT 1 AROUND`);
        entry = board.entries.find((item) => item.player.toLowerCase() === Hunts.myTeam.toLowerCase()) || null;
      } catch (error) { /* the name alone, then */ }
    }
    showTeamEntry(entry);
  }
  function teamEntry() {
    for (const entry of leaderboard.entries.values()) {
      if (entry.player.toLowerCase() === Hunts.myTeam.toLowerCase()) return entry;
    }
    return null;
  }
  function showTeamEntry(entry) {
    const line = document.getElementById("my-team");
    document.getElementById("my-team-name").textContent = entry ? entry.player : Hunts.myTeam;
    const members = entry && entry.members ? entry.members : [];
    const list = document.getElementById("my-team-members");
    list.textContent = members.length ? `(${members.join(", ")})` : "";
    list.dataset.members = JSON.stringify(members);
    line.hidden = false;
  }

  // ---- a time trial's clock: the player has hunt.trial seconds from their first check-in (in a
  // team hunt the team has, from its first check-in: a teammate's find starts it).
  // The start is the first check-in's `at` as this browser saw it (kept per hunt and player),
  // else what the leaderboard says: the last accepted check-in (the entry's `at`) less time_s.
  function trialKey() { return `scavenger.play.trial.${hunt.id}.${Hunts.myName || ""}`; }
  function noteTrialStart(at) {
    if (!hunt || !hunt.trial || !Number.isFinite(at)) return;
    if (trialStart === null || at < trialStart) {
      trialStart = at;
      localStorage.setItem(trialKey(), String(at));
    }
    showTrialClock();
  }
  async function readTrialStart(me) {
    if (!hunt.trial) { showTrialClock(); return; }
    const kept = Number(localStorage.getItem(trialKey()));
    if (kept > 0 && (trialStart === null || kept < trialStart)) trialStart = kept;
    if (me && me.found.length) {
      try {
        const board = await request(`LEADERBOARD ${hunt.id} LIMIT 1 AROUND`);
        const mine = board.entries.find(isMine);
        noteTrialStartOf(mine);
      } catch (error) { /* the clock shows what this browser knows */ }
    }
    showTrialClock();
  }
  // The start a board entry tells: its last accepted check-in (`at`) less its time (`time_s`).
  function noteTrialStartOf(entry) {
    if (entry && entry.at && entry.time_s !== null && entry.time_s !== undefined) noteTrialStart(Date.parse(entry.at) - entry.time_s * 1000);
  }
  // Whether a board entry is the player's own: their team's in a team hunt.
  function isMine(entry) {
    const mine = Hunts.myTeam || Hunts.myName;
    return !!mine && entry.player.toLowerCase() === mine.toLowerCase();
  }
  function clockText(seconds) {
    const s = Math.max(0, Math.floor(seconds));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    return (h ? `${h}:${String(m).padStart(2, "0")}` : `${m}`) + `:${String(r).padStart(2, "0")}`;
  }
  function showTrialClock() {
    const clock = document.getElementById("trial-clock");
    clearTimeout(trialTimer);
    if (!hunt || !hunt.trial || !answerIsPlayer()) { clock.hidden = true; return; }
    clock.hidden = false;
    if (trialStart === null) {
      clock.className = "score trial";
      clock.textContent = Hunts.myTeam
        ? `Time trial: your team has ${clockText(hunt.trial)} from its first check-in.`
        : `Time trial: you have ${clockText(hunt.trial)} from your first check-in.`;
      return;
    }
    const left = hunt.trial - (Date.now() - trialStart) / 1000;
    if (left <= 0) {
      clock.className = "score trial up";
      clock.textContent = Hunts.myTeam ? "Time trial: your team's time is up." : "Time trial: your time is up.";
      return;
    }
    clock.className = "score trial running";
    clock.textContent = `Time trial: ${clockText(left)} left.`;
    trialTimer = setTimeout(showTrialClock, 1000 - ((Date.now() - trialStart) % 1000) + 5);
  }
  function answerIsPlayer() { return document.getElementById("my-score").textContent !== ""; }

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

  // The stops whose check-in from this browser waits for the host's review (a photo, or flagged):
  // kept per hunt and player, as the server tells a player of their pending check-ins only in the
  // reply to CHECKIN; a stop leaves the set once found.
  function pendingKey() { return `scavenger.play.pending.${hunt.id}.${Hunts.myName || ""}`; }
  function readPending() {
    let kept = [];
    try { kept = JSON.parse(localStorage.getItem(pendingKey()) || "[]"); } catch (error) { kept = []; }
    pending = new Set(kept.filter((id) => stops.has(id) && !found.has(id)));
    keepPending();
  }
  function keepPending() {
    if (pending.size) localStorage.setItem(pendingKey(), JSON.stringify([...pending]));
    else localStorage.removeItem(pendingKey());
  }

  function renderStops() {
    const list = document.getElementById("stops");
    const previous = stopSelect.value;
    stopLayer.clearLayers();
    stopSelect.replaceChildren();
    list.replaceChildren();
    const ordered = [...stops.values()].sort((a, b) => a.n - b.n);
    for (const stop of ordered) {
      const isFound = found.has(stop.id);
      const isPending = !isFound && pending.has(stop.id);
      const item = element("li", isFound ? "found" : isPending ? "pending" : "");
      item.dataset.stop = stop.id;
      item.append(element("strong", null, stopName(stop)));
      const facts = [`${stop.points} points`, `within ${stop.radius_m} m`];
      if (stop.proof === "code") facts.push("needs the code found there");
      if (stop.proof === "photo") facts.push("needs a photo, reviewed by the host");
      facts.push(`found by ${stop.found_by}`);
      if (isFound) facts.unshift("found");
      if (isPending) facts.unshift("waiting for the host's review");
      item.append(element("div", "meta", facts.join(" · ")));
      if (stop.clue) item.append(element("div", "clue", stop.clue));
      if (stop.lat === null) item.append(element("div", "meta", "Hidden: its place shows once you find it."));
      list.append(item);

      const option = element("option", null, stopName(stop) + (isFound ? " (found)" : isPending ? " (waiting for review)" : ""));
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

  // ---- joining. The page cannot tell a team hunt by its code before joining it: the team field
  // shows when the server answers that the hunt is played in teams (a team hunt joined without
  // a team is BAD_ARGUMENT), and is then required; a team named for a hunt of single players is
  // dropped and the join sent again without it.
  const teamField = document.getElementById("join-team-field");
  const teamInput = document.getElementById("join-team");
  function askForTeam(ask) {
    teamField.hidden = !ask;
    teamInput.required = ask;
    document.getElementById("join-team-note").hidden = !ask;
  }
  document.getElementById("join-code").addEventListener("input", () => { if (!teamInput.value.trim()) askForTeam(false); });
  document.getElementById("join-form").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    const code = document.getElementById("join-code").value.trim();
    const name = document.getElementById("join-name").value.trim();
    let team = teamField.hidden ? "" : teamInput.value.trim();
    const line = () => `JOIN ${quote(code)}` + (name ? ` AS ${quote(name)}` : "") + (team ? ` TEAM ${quote(team)}` : "");
    try {
      let answer;
      try {
        answer = await request(line());
      } catch (error) {
        if (!(error.code === "BAD_ARGUMENT" && /team/i.test(error.message || ""))) throw error;
        if (!team) {
          askForTeam(true);
          teamInput.focus();
          report("join-form", "This hunt is played in teams: type your team's name (a new name starts a team), then Join.", "error");
          return;
        }
        // A team for a hunt of single players: join it alone.
        team = "";
        answer = await request(line());
      }
      Hunts.myName = name || Hunts.user.name;
      Hunts.myTeam = answer.hunt.teams ? team : null;
      askForTeam(false);
      teamInput.value = "";
      report("join-form", answer.hunt.teams ? `Joined “${answer.hunt.name}” in the team ${team}.` : `Joined “${answer.hunt.name}”.`);
      await openHunt(answer.hunt.id);
      listMine();
    } catch (error) {
      if (error.code === "CONFLICT" && team && /full/i.test(error.message || "")) report("join-form", `The team ${team} is full: pick another team, or a new name to start one.`, "error");
      else report("join-form", error.code === "NOT_FOUND" ? "No running or upcoming hunt has that code." : errorText(error), "error");
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
        show("error", locationNeedsHTTPS(error) || "Your location is not available: " + error.message + ". Allow this page to use your location and try again.");
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
      noteTrialStart(Date.parse(checkin.at));
      const after = `${Hunts.myTeam ? "Your team has" : "You have"} ${answer.score.points} points, rank ${answer.score.rank}.`;
      if (checkin.status === "accepted") show("ok", `Checked in at ${stopName(stop)}: +${checkin.points} points. ${after}`);
      else if (checkin.status === "pending") show("pending", `Checked in at ${stopName(stop)}: waiting for the host to review your photo. ${after}`);
      else show("pending", `Checked in at ${stopName(stop)}, but flagged for review (you moved faster than anyone walks). ${after}`);
      if (checkin.status !== "accepted") { pending.add(stop.id); keepPending(); }
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
    if (!(error instanceof Hunts.ProtocolError)) { show("error", errorText(error)); return; }
    switch (error.code) {
    case "TOO_FAR": {
      const distance = error.distance;
      show("too-far", `Too far: you are ${distance} m from ${stopName(stop)}. Get within ${stop.radius_m} m of it and check in again.`);
      break;
    }
    case "FORBIDDEN":
      show("error", stop.proof === "code" ? "That is not this stop's code." : errorText(error));
      break;
    case "RATE_LIMITED":
      show("error", `Too many wrong codes: try again in ${error.retryAfter} s.`);
      break;
    case "CONFLICT":
      if (hunt && hunt.trial && /time is up/.test(error.message)) {
        show("error", "Your time is up: this time trial is over for you.");
        if (trialStart === null || Date.now() - trialStart < hunt.trial * 1000) noteTrialStart(Date.now() - hunt.trial * 1000);
        break;
      }
      show("error", errorText(error));
      // A teammate was there first: the stops the team found are read again.
      if (hunt && hunt.teams && /your team already/.test(error.message || "")) readHunt(hunt.id).catch(() => {});
      break;
    default:
      show("error", errorText(error));
    }
  }

  stopSelect.addEventListener("change", updateProofFields);

  // ---- live: the hunt's events.
  function onEvent(event) {
    if (!hunt) return;
    switch (event.type) {
    case "score": {
      // A player (or a team) new to the board has just joined: the count of players follows.
      leaderboard.update(event.entry);
      if (leaderboard.players > hunt.players) {
        hunt.players = leaderboard.players;
        document.getElementById("hunt-meta").textContent = "Hosted by " + hunt.host + " · " + huntState(hunt);
      }
      // The player's own line follows their entry (a rival passing them moves their rank); in a
      // team hunt the team's entry, with its players.
      if (isMine(event.entry)) {
        document.getElementById("my-score").textContent = standing(event.entry.points, event.entry.found, event.entry.rank);
        // In a trial the entry tells when the clock started (a teammate's first find, say).
        noteTrialStartOf(event.entry);
        if (Hunts.myTeam) showTeamEntry(event.entry);
        // A find of the player's own (a review approved it) or a teammate's: the stops found are
        // read again (in a team hunt they count once per team).
        if (event.entry.found > found.size) readHunt(hunt.id).catch((error) => say(errorText(error), "error"));
      }
      break;
    }
    case "found": {
      const stop = stops.get(event.stop);
      if (stop) stop.found_by += 1;
      // In a team hunt the finder is a member: their team, when the board knows it, follows.
      const team = hunt.teams ? leaderboard.teamOf(event.player) : null;
      const own = !hunt.teams && [Hunts.myName, Hunts.user && Hunts.user.name].some((name) => name && name.toLowerCase() === event.player.toLowerCase());
      if (own || (team && Hunts.myTeam && team.player.toLowerCase() === Hunts.myTeam.toLowerCase())) {
        found.add(event.stop);
        // A check-in that waited for a review was approved: the player hears it wherever they look.
        if (pending.delete(event.stop)) {
          keepPending();
          if (stop) toast(`Approved: ${stopName(stop)} is found (+${event.points} points).`);
        }
      }
      if (stop) renderStops();
      activity(`${event.player}${team ? ` (${team.player})` : ""} found ${stop ? stopName(stop) : "a stop"} (+${event.points})`);
      readScoresSoon();
      break;
    }
    case "badge":
      if (event.player === Hunts.myName) {
        toast(`Badge earned: ${event.badge.name}! ${event.badge.description}`);
        readScoresSoon();
      }
      activity(`${event.player} earned the badge ${event.badge.name}`);
      break;
    case "hint":
      document.getElementById("hints").prepend(hintItem(event));
      document.getElementById("no-hints").hidden = true;
      activity("New hint: " + event.text);
      toast("Hint: " + event.text);
      break;
    case "hunt": {
      const changed = event.hunt.state !== hunt.state;
      hunt = Object.assign(hunt, event.hunt);
      if (changed) {
        activity(event.hunt.state === "running" ? "The hunt has started." : event.hunt.state === "ended" ? "The hunt has ended." : "The hunt changed.");
        readHunt(hunt.id).then(() => { if (!fitted) fitMap(); }).catch((error) => say(errorText(error), "error"));
        listMine();
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

  // ---- a join link, /play?code=CODE: the join form opens with the code filled in, in view (after
  // signing in: until then the sign-in form says what the code is for).
  const linkCode = (new URLSearchParams(location.search).get("code") || "").trim().slice(0, 64);
  if (linkCode) {
    document.getElementById("join-code").value = linkCode;
    if (!Hunts.client.token) report("login-form", `Sign in or create an account, then join the hunt with the code ${linkCode}.`, "pending");
  }
  setUpGuestJoin({
    code: linkCode,
    onJoined: async (answer, name, team) => {
      Hunts.myName = name;
      Hunts.myTeam = answer.hunt.teams ? team : null;
      // Signing in opens the hunt kept here (see onSignedIn below).
      localStorage.setItem(HUNT_KEY, answer.hunt.id);
      await Hunts.signIn(answer);
    },
  });
  if (linkCode && !Hunts.client.token) document.getElementById("guest-name").focus({ preventScroll: false });
  function showJoinForm() {
    const form = document.getElementById("join-form");
    form.scrollIntoView({ block: "center" });
    document.getElementById("join-button").focus({ preventScroll: true });
  }

  Hunts.start({
    onEvent,
    onSignedIn: async (user) => {
      Hunts.myName = Hunts.myName || user.name;
      // A guest plays the hunt they joined: no other hunt to join, no scores across hunts.
      document.getElementById("join-section").hidden = !!user.guest;
      if (user.guest) {
        const id = localStorage.getItem(HUNT_KEY);
        if (id) await openHunt(id);
        return;
      }
      if (linkCode) { report("login-form", ""); showJoinForm(); }
      await readScores();
      await listMine();
      const id = localStorage.getItem(HUNT_KEY);
      if (id) await openHunt(id);
      // The hunt opened above the form: the join link's form stays in view.
      if (linkCode && document.getElementById("join-code").value) showJoinForm();
    },
  });
})();
