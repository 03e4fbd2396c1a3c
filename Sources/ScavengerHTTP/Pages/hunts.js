// Shared by the player's page (/play) and the host's view (/host), an ES module: the client of
// the line protocol (scavenger.js, /client.js: one WebSocket kept open across drops, the session
// resumed with AUTH, writes sent with REQUEST keys, watches re-issued), the signed-in session, the
// map, and small helpers that build elements. Every text that came from the server is put in the
// page with textContent, never as markup.
import { ScavengerClient, ScavengerError, quote } from "/client.js";
import { errorText, report, reportError, reveal, toast } from "/notices.js";
import { makeMap } from "/basemap.js";

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
    who.textContent = !user ? "Not signed in." : user.guest ? `Playing as ${user.name} (a guest)` : "Signed in as " + user.name;
    document.getElementById("account-forms").hidden = !!user;
    const guestSection = document.getElementById("guest-section");
    if (guestSection) guestSection.hidden = !!user;
    document.getElementById("logout-button").hidden = !user;
    showEmailState();
  }

  // Whether the signed-in user's email is verified (WHOAMI shows it to that user only).
  async function showEmailState() {
    const state = document.getElementById("email-state");
    const form = document.getElementById("verify-form");
    if (!state || !form) return;
    if (!user || user.guest) { state.textContent = ""; form.hidden = true; return; }
    try {
      const answer = await request("WHOAMI");
      const verified = answer.user && answer.user.email_verified;
      state.textContent = verified ? "(email verified)" : "(email not verified)";
      form.hidden = !!verified;
    } catch (error) { state.textContent = ""; }
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
    if (sessionUser && automatic && !restored && !user) signedIn({ user: sessionUser }).catch((error) => say(errorText(error), "error"));
    if (!sessionUser) { user = null; showUser(); }
  });

  function formValue(id) { return document.getElementById(id).value; }

  // Whether this daemon sends mail: the page is served with `data-mail="off"` on the account
  // section when it does not, and then the recovery forms (they would answer UNAVAILABLE) hide.
  const mailOff = document.getElementById("account").dataset.mail === "off";

  function setUpAccountForms() {
    if (mailOff) {
      for (const id of ["forgot-form", "reset-form", "verify-form", "email-state"]) document.getElementById(id).remove();
      document.getElementById("ask-host").hidden = false;
    }
    document.getElementById("login-form").addEventListener("submit", async (submit) => {
      submit.preventDefault();
      try {
        await signedIn(await request(`LOGIN ${quote(formValue("login-name"))} ${quote(formValue("login-password"))}`));
        document.getElementById("login-password").value = "";
        report("login-form", "");
        say("Signed in.");
      } catch (error) { reportError("login-form", error); }
    });
    document.getElementById("register-form").addEventListener("submit", async (submit) => {
      submit.preventDefault();
      try {
        await signedIn(await request(`REGISTER ${quote(formValue("register-name"))} ${quote(formValue("register-email"))} ${quote(formValue("register-password"))}`));
        document.getElementById("register-password").value = "";
        report("register-form", "");
        say("Account created; signed in.");
      } catch (error) { reportError("register-form", error); }
    });
    const forgotForm = document.getElementById("forgot-form");
    if (forgotForm) {
      forgotForm.addEventListener("submit", async (submit) => {
        submit.preventDefault();
        try {
          await request(`FORGOT ${quote(formValue("forgot-name"))}`);
          const name = formValue("forgot-name");
          if (!name.includes("@")) document.getElementById("reset-name").value = name;
          document.getElementById("reset-form").hidden = false;
          report("forgot-form", "If that account exists, a reset code is on its way to its email.");
        } catch (error) { reportError("forgot-form", error); }
      });
      document.getElementById("reset-form").addEventListener("submit", async (submit) => {
        submit.preventDefault();
        try {
          await signedIn(await request(`RESET ${quote(formValue("reset-name"))} ${quote(formValue("reset-code").trim())} ${quote(formValue("reset-password"))}`));
          document.getElementById("reset-password").value = "";
          document.getElementById("reset-form").hidden = true;
          report("forgot-form", "");
          say("Password changed; signed in.");
        } catch (error) { reportError("reset-form", error); }
      });
      document.getElementById("verify-send-button").addEventListener("click", async () => {
        try {
          await request("VERIFY");
          report("verify-form", "A verification code is on its way to your email.");
        } catch (error) { reportError("verify-form", error); }
      });
      document.getElementById("verify-form").addEventListener("submit", async (submit) => {
        submit.preventDefault();
        try {
          await request(`VERIFY ${quote(formValue("verify-code").trim())}`);
          report("verify-form", "");
          say("Email verified.");
          showEmailState();
        } catch (error) { reportError("verify-form", error); }
      });
    }
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

  // One number of degrees, "48.85" or with a decimal comma "48,85"; NaN when it is not one.
  function parseDegree(text) {
    const part = String(text).trim().replace(/^([+-]?\d+),(\d+)$/, "$1.$2");
    return /^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(part) ? Number(part) : NaN;
  }

  // "52.52, 13.405", "52.52 13.405" or "52.52;13.405" as [lat, lon], and with decimal commas
  // "48,85 2,35" or "48,85; 2,35"; null when it is not two numbers within -90…90 and -180…180.
  function parseCoordinates(text) {
    const trimmed = String(text).trim();
    for (const separator of [/\s*[,; ]\s*/, /\s*;\s*|\s+/]) {
      const parts = trimmed.split(separator).filter((part) => part !== "");
      if (parts.length !== 2) continue;
      const [lat, lon] = parts.map(parseDegree);
      if (Math.abs(lat) <= 90 && Math.abs(lon) <= 180) return [lat, lon];
    }
    return null;
  }

  // "1 point", "3 points".
  function count(number, noun) { return `${number} ${noun}${number === 1 ? "" : "s"}`; }

  // A time in seconds as "45 s", "3 min 05 s", "2 min", "2 h 03 min", "1 h".
  function duration(seconds) {
    const s = Math.max(0, Math.round(seconds));
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min` + (s % 60 ? ` ${String(s % 60).padStart(2, "0")} s` : "");
    return `${Math.floor(s / 3600)} h` + (s % 3600 >= 60 ? ` ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min` : "");
  }

  // A hunt's state as the page's clock says: the server's `state` was true when it was read, and a
  // hunt starts and ends by its times with nobody writing (its watchers get a `hunt` event; a list
  // read earlier does not).
  function liveState(hunt, now = Date.now()) {
    if (hunt.state === "ended") return "ended";
    if (hunt.ends && Date.parse(hunt.ends) <= now) return "ended";
    if (hunt.state === "scheduled" && hunt.starts && Date.parse(hunt.starts) <= now) return "running";
    return hunt.state;
  }

  // Calls `render` again when the first of `hunts` changes state by its times (one timer per
  // `key`, replaced at each call): a list of hunts follows their states.
  const stateTimers = new Map();
  function rerenderAtNextChange(key, hunts, render) {
    clearTimeout(stateTimers.get(key));
    const now = Date.now();
    const times = [];
    for (const hunt of hunts) {
      const state = liveState(hunt, now);
      if (state === "scheduled" && hunt.starts) times.push(Date.parse(hunt.starts));
      if (state !== "ended" && hunt.ends) times.push(Date.parse(hunt.ends));
    }
    const next = Math.min(...times.filter((time) => time > now));
    if (Number.isFinite(next)) stateTimers.set(key, setTimeout(render, Math.min(next - now + 250, 2 ** 31 - 1)));
  }

  function huntState(hunt) {
    const state = liveState(hunt);
    const parts = [state];
    if (state === "scheduled" && hunt.starts) parts.push("starts " + when(hunt.starts));
    if (state !== "ended" && hunt.ends) parts.push("ends " + when(hunt.ends));
    if (hunt.ordered) parts.push("stops in order");
    if (hunt.trial) parts.push("time trial: " + duration(hunt.trial) + " each");
    if (hunt.teams) parts.push("teams of up to " + hunt.teams);
    if (hunt.badge) parts.push("badge: " + hunt.badge);
    parts.push(hunt.stops + (hunt.stops === 1 ? " stop" : " stops"));
    parts.push(hunt.players + (hunt.players === 1 ? " player" : " players"));
    return parts.join(" · ");
  }

  // ---- the leaderboard, kept from LEADERBOARD and updated by `score` events. In a team hunt
  // (setTeams(true)) it is a board of teams: each entry's `player` is a team's name, its
  // `members` the team's players, shown under the name; the page's own team (Hunts.myTeam) is
  // marked as the player's own row is elsewhere.
  class Leaderboard {
    constructor(tbody) { this.tbody = tbody; this.entries = new Map(); this.teams = false; }
    // Says whether the board is of teams: its column's heading follows ("Team" or "Player").
    setTeams(teams) {
      if (teams === this.teams) return;
      this.teams = teams;
      const heading = this.tbody.closest("table").querySelector("th.who");
      if (heading) heading.textContent = teams ? "Team" : "Player";
      this.render();
    }
    reset(entries) {
      this.entries = new Map();
      for (const entry of entries) this.entries.set(entry.player, entry);
      this.render();
    }
    // Answers whether the entry is one the board did not have (a player, or a team, just joined).
    update(entry) {
      const joined = !this.entries.has(entry.player);
      if (this.teams) {
        // A player moved to another team leaves the one they were in.
        for (const member of entry.members || []) {
          for (const other of this.entries.values()) {
            if (other.player !== entry.player && other.members && other.members.includes(member)) {
              other.members = other.members.filter((name) => name !== member);
            }
          }
        }
      }
      this.entries.set(entry.player, entry);
      this.render();
      return joined;
    }
    get size() { return this.entries.size; }
    // How many players the board holds: its entries, or in a team hunt its teams' members.
    get players() {
      if (!this.teams) return this.entries.size;
      let total = 0;
      for (const entry of this.entries.values()) total += (entry.members || []).length;
      return total;
    }
    entry(name) { return this.entries.get(name) || null; }
    // The team entry a player is a member of, or null.
    teamOf(player) {
      for (const entry of this.entries.values()) if (entry.members && entry.members.includes(player)) return entry;
      return null;
    }
    render() {
      // A time trial's entries (with time_s) share a rank only at equal stops and time: by name then.
      const rows = [...this.entries.values()].sort((a, b) =>
        a.rank - b.rank || ("time_s" in a ? 0 : b.points - a.points) || (a.player < b.player ? -1 : a.player > b.player ? 1 : 0));
      const mine = this.teams ? Hunts.myTeam : Hunts.myName;
      this.tbody.replaceChildren(...rows.map((entry) => {
        const row = element("tr");
        row.dataset.player = entry.player;
        if (user && mine && entry.player.toLowerCase() === mine.toLowerCase()) row.className = "me";
        const who = element("td", "player");
        if (this.teams || entry.members) {
          who.append(element("span", "team-name", entry.player));
          const members = entry.members || [];
          const list = element("span", "members", members.length ? members.join(", ") : "no players");
          list.dataset.members = JSON.stringify(members);
          who.append(list);
        } else {
          who.textContent = entry.player;
        }
        row.append(element("td", "rank", entry.rank), who,
          element("td", "points", entry.points),
          element("td", "found", entry.found + (entry.found > 0 && entry.time_s > 0 ? ` in ${Hunts.duration(entry.time_s)}` : "")));
        return row;
      }));
    }
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
    say, quote, request, start, watchHunt, signIn: signedIn, element, button, when, huntState, liveState, rerenderAtNextChange, duration, parseDegree,
    parseCoordinates, count, Leaderboard, makeMap, label, report, reportError, reveal, toast, errorText,
    client, ProtocolError: ScavengerError, myName: null, myTeam: null,
    get user() { return user; },
  };
})();
