import { Hunts } from "/hunts.js";
import { joinCard, qrImage, showJoinPanel } from "/join-link.js";
// The host's view: create a hunt, place its stops by clicking the map, start it, send hints,
// review photo and flagged check-ins, and print the QR codes of its code stops.
//
// The daemon keeps a stop's code only hashed: this browser keeps the codes it typed (in
// localStorage, by stop id) and has the daemon draw them (POST /qr, the code in the body).
(() => {
  const { say, quote, request, element, button, when, huntState, count, report, reportError, toast, errorText } = Hunts;
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

  // ---- the hunts this user hosts; their states follow the clock (and the watched hunt's events).
  let hosted = [];
  async function listMine() {
    try {
      const page = await request("HUNTS MINE LIMIT 50");
      hosted = page.hunts.filter((item) => item.code !== undefined);
      renderMine();
    } catch (error) { say(errorText(error), "error"); }
  }
  function renderMine() {
    field("my-hunts").replaceChildren(...hosted.map((item) => {
      const row = element("li");
      row.dataset.hunt = item.id;
      row.append(button(item.name, (click) => openHunt(item.id, click.target), "link"), element("span", "meta state", " " + Hunts.liveState(item)));
      return row;
    }));
    field("no-hunts").hidden = hosted.length > 0;
    Hunts.rerenderAtNextChange("hosted", hosted, renderMine);
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
    // Protocol 1.4: a team hunt and its largest team (2–50, 6 unless changed), a time trial, the
    // hunt's own badge.
    if (field("create-teams").checked) line += " TEAMS SIZE " + Math.round(Number(field("create-team-size").value || 6));
    const trial = field("create-trial").value;
    if (trial) line += " TRIAL " + Math.round(Number(trial) * 60);
    const badge = field("create-badge").value.trim();
    if (badge) line += " BADGE " + quote(badge);
    // Protocol 1.5: a class joins with the code and a name, no account (at most n guests).
    if (field("create-guests").checked) line += " GUESTS " + Math.round(Number(field("create-guest-count").value || 100));
    try {
      const answer = await request(line);
      report("create-form", `Created “${answer.hunt.name}”. Click the map to place its stops.`);
      field("create-form").reset();
      field("create-team-size").disabled = true;
      await openHunt(answer.hunt.id);
      listMine();
    } catch (error) { reportError("create-form", error); }
  });

  // The largest team matters only for a team hunt: the field is off (and not validated) without it.
  field("create-teams").addEventListener("change", () => {
    field("create-team-size").disabled = !field("create-teams").checked;
  });

  // ---- one hunt.
  async function openHunt(id, anchor) {
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
      if (anchor) reportError(anchor, error); else say(errorText(error), "error");
    }
  }

  async function readHunt(id) {
    const answer = await request(`HUNT ${id}`);
    if (hunt && hunt.id !== answer.hunt.id) {
      // Another hunt: the messages about the one shown before go.
      for (const box of document.querySelectorAll("#hunt-section .form-message")) box.hidden = true;
    }
    hunt = answer.hunt;
    stops = answer.stops.slice().sort((a, b) => a.n - b.n);
    field("hunt-name").textContent = hunt.name;
    field("hunt-code").textContent = hunt.code || "";
    field("hunt-meta").textContent = huntState(hunt);
    field("hunt-description").textContent = hunt.description;
    leaderboard.setTeams(!!hunt.teams);
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
    showJoinPanel(hunt);
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
      report("stop-form", `Removed ${stopName(stop)}.`);
      await readHunt(hunt.id);
    } catch (error) { reportError("stop-form", error); }
  }

  // ---- going to a place typed as "latitude, longitude".
  field("goto-form").addEventListener("submit", (submit) => {
    submit.preventDefault();
    const place = Hunts.parseCoordinates(field("goto-place").value);
    if (!place) {
      report("goto-form", "Type a place as latitude, longitude in degrees, e.g. 52.5200, 13.4050 (or with decimal commas 52,5200 13,4050), latitude within ±90, longitude within ±180.", "error");
      return;
    }
    map.setView(place, Math.max(map.getZoom(), 16));
    report("goto-form", `The map shows ${place[0]}, ${place[1]}.`);
  });

  // ---- placing a stop: a click on the map gives its place, or it is typed in the fields.
  // The typed place, or null (with the fields marked) when they are not a latitude and longitude.
  function draftPlace() {
    // Each field one number: "48.85", or with a decimal comma "48,85".
    const lat = field("stop-lat"), lon = field("stop-lon");
    const latitude = Hunts.parseDegree(lat.value), longitude = Hunts.parseDegree(lon.value);
    const latOK = Math.abs(latitude) <= 90, lonOK = Math.abs(longitude) <= 180;
    lat.setCustomValidity(latOK || !lat.value ? "" : "a latitude in degrees, within ±90 (e.g. 48.8584)");
    lon.setCustomValidity(lonOK || !lon.value ? "" : "a longitude in degrees, within ±180 (e.g. 2.2945)");
    return latOK && lonOK ? [latitude, longitude] : null;
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
      report("stop-form", field("stop-lat").value || field("stop-lon").value
        ? "The stop's place must be a latitude within ±90 and a longitude within ±180, in degrees (e.g. 48.8584 or 48,8584)."
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
      report("stop-form", `Added ${stopName(answer.stop)}.`);
      for (const id of ["stop-title", "stop-clue", "stop-code", "stop-lat", "stop-lon"]) field(id).value = "";
      field("stop-hidden").checked = false;
      draftLayer.clearLayers();
      await readHunt(hunt.id);
    } catch (error) { reportError("stop-form", error); }
  });

  // ---- running it: a hunt with no stop is refused here, and starting asks first (its stops can
  // no longer change once it runs).
  field("start-button").addEventListener("click", async () => {
    if (stops.length === 0) {
      report("start-button", "Add at least one stop (click the map) before starting the hunt.", "error");
      return;
    }
    if (!confirm(`Start “${hunt.name}” now, for everyone? Its ${count(stops.length, "stop")} can no longer be changed.`)) return;
    try {
      await request(`STARTHUNT ${hunt.id}`);
      report("start-button", "The hunt has started.");
      await readHunt(hunt.id);
      await listMine();
    } catch (error) { reportError("start-button", error); }
  });

  field("end-button").addEventListener("click", async () => {
    if (!confirm("End this hunt for everyone now?")) return;
    try {
      await request(`ENDHUNT ${hunt.id}`);
      report("end-button", "The hunt has ended.");
      await readHunt(hunt.id);
      await listMine();
    } catch (error) { reportError("end-button", error); }
  });

  field("hint-form").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    try {
      await request(`HINT ${hunt.id} ${quote(field("hint-text").value.trim())}`);
      field("hint-text").value = "";
      report("hint-form", "Hint sent.");
      await readHunt(hunt.id);
    } catch (error) { reportError("hint-form", error); }
  });

  // ---- review: pending (photo) and flagged check-ins, read again when the hunt's watch says one
  // waits (a `review` event, the host's only) or a review was decided (a find, a score).
  async function readReviews() {
    const list = field("reviews");
    try {
      const page = await request(`REVIEW ${hunt.id} LIMIT 50`);
      list.replaceChildren(...page.checkins.map(reviewItem));
      field("review-count").textContent = reviewCount(page.checkins, page.next !== null);
    } catch (error) { say(errorText(error), "error"); }
  }
  let reviewTimer = null;
  function readReviewsSoon() {
    clearTimeout(reviewTimer);
    reviewTimer = setTimeout(readReviews, 300);
  }
  // "2 photos wait for review", "1 photo and 1 flagged check-in wait for review", "Nothing waits…".
  function reviewCount(checkins, more) {
    const photos = checkins.filter((checkin) => checkin.status === "pending").length;
    const flagged = checkins.length - photos;
    if (checkins.length === 0) return "Nothing waits for a review.";
    const parts = [];
    if (photos) parts.push(count(photos, "photo"));
    if (flagged) parts.push(count(flagged, "flagged check-in"));
    return `${more ? "At least " : ""}${parts.join(" and ")} ${checkins.length === 1 ? "waits" : "wait"} for review.`;
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
        } catch (error) { reportError(holder, error); }
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
      report("review-count", done);
      await readReviews();
      await readHunt(hunt.id);
    } catch (error) { reportError("review-count", error); }
  }

  // ---- the printable sheet: a QR code per code stop, drawn by the daemon.
  async function renderSheet() {
    const sheet = field("sheet");
    const kept = codes();
    const codeStops = stops.filter((stop) => stop.proof === "code");
    field("sheet-title").textContent = hunt.name;
    field("no-codes").hidden = codeStops.length > 0 || (!!hunt.code && Hunts.liveState(hunt) !== "ended");
    const cards = [];
    for (const stop of codeStops) {
      const card = element("figure", "qr-card");
      card.dataset.stop = stop.id;
      const code = kept[stop.id];
      if (code) {
        try {
          // The code readable too, under its QR code, for a player whose phone cannot scan.
          card.append(await qrImage(code, stopName(stop), `QR code of ${stopName(stop)}`), element("figcaption", "card-code code", code));
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
    const join = await joinCard(hunt);
    sheet.replaceChildren(...(join ? [join] : []), ...cards);
  }

  field("print-button").addEventListener("click", () => window.print());

  // ---- live: the hunt's events.
  function onEvent(event) {
    if (!hunt) return;
    if (event.type === "score") {
      // A player (or a team) new to the board has just joined: the count of players follows.
      leaderboard.update(event.entry);
      if (leaderboard.players > hunt.players) {
        hunt.players = leaderboard.players;
        field("hunt-meta").textContent = huntState(hunt);
      }
    } else if (event.type === "found") {
      const stop = stops.find((item) => item.id === event.stop);
      if (stop) { stop.found_by += 1; renderStops(); }
      readReviewsSoon();   // an approval (here or by a moderator) leaves the queue
    } else if (event.type === "review") {
      // A check-in waits (a photo, or flagged by the travel check): the list and its count follow.
      readReviewsSoon();
      toast(event.status === "pending" ? "A photo waits for your review." : "A flagged check-in waits for your review.");
    } else if (event.type === "hunt" && event.hunt.state !== hunt.state) {
      // Started or ended (by its times, or elsewhere): the hunt and the list of hunts say so.
      readHunt(hunt.id).then(listMine).catch((error) => say(errorText(error), "error"));
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
