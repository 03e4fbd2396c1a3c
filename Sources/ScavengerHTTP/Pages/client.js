// scavenger.js: the Scavenger line protocol over the daemon's /ws WebSocket, as promises.
// Served by scavengerd at /client.js. Usage:
//   import { ScavengerClient } from "/client.js";
//   const client = new ScavengerClient();            // ws(s)://<this host>/ws
//   // Outside a browser, name the URL, and pass a WebSocket class where there is no global one
//   // (Node 20): new ScavengerClient({ url: "ws://127.0.0.1:7468/ws", WebSocket: SomeWebSocket })
//   await client.login("alice", "secret123");
//   const pins = await client.nearby(52.52, 13.405, 500);
//   const watch = client.watch(52.52, 13.405, 500);
//   for await (const event of watch) { ... }          // SNAPSHOT first, then live; resumes itself
//
// Replies come in the order of the requests, one per request line; EVENT lines go to the watch
// their "watch" field names and are never taken for a reply. When the connection drops, the
// client reconnects (capped exponential back-off with jitter), resumes the session with AUTH,
// re-issues its watches (an area watch with SINCE its last seq) and resends the requests that
// had no reply yet: reads as they were, writes with the same REQUEST key, so that the daemon
// answers a write that already ran from its stored reply instead of running it again.

/** The commands that write: each is sent with a `REQUEST key` unless the caller gave one. */
export const WRITE_COMMANDS = Object.freeze(["POST", "POSTPHOTO", "DELETE", "REPLY", "REPORT",
  "CREATEHUNT", "ADDSTOP", "REMOVESTOP", "JOIN", "LEAVE", "CHECKIN", "APPROVE", "REJECT", "HINT",
  "STARTHUNT", "EXTEND", "ENDHUNT", "CLAIM", "RESOLVE", "BAN", "UNBAN"]);
const writes = new Set(WRITE_COMMANDS);
// Requests not sent again after their connection closed without a reply: their outcome is
// unknown and a second one would not be the same (a second REGISTER is CONFLICT, WATCH and
// UNWATCH belong to the connection, AUTH is sent by the client itself, a second FORGOT or VERIFY
// mails another code, a second RESET finds its code spent).
const notResent = new Set(["REGISTER", "LOGOUT", "QUIT", "WATCH", "UNWATCH", "AUTH", "FORGOT", "RESET", "VERIFY"]);
// How many times a request answered UNAVAILABLE is sent again before the error is the answer.
const UNAVAILABLE_RETRIES = 4;

/** An `ERR` reply, or a request the client could not complete. */
export class ScavengerError extends Error {
  constructor(code, message, { detail = message, retryAfter = null, distance = null, line = null } = {}) {
    super(message);
    this.name = "ScavengerError";
    /** The protocol's code (`NOT_FOUND`, `RATE_LIMITED`, …), or `CONNECTION_LOST` / `CLOSED`. */
    this.code = code;
    /** Everything after the code, as the daemon wrote it (for TOO_FAR it starts with the distance). */
    this.detail = detail;
    /** For RATE_LIMITED: the seconds to wait before trying again; else null. */
    this.retryAfter = retryAfter;
    /** For TOO_FAR: the distance from the fix to the stop, in whole metres; else null. */
    this.distance = distance;
    /** The reply line, when there was one. */
    this.line = line;
  }

  /** The error an `ERR <CODE> <message>` line stands for. */
  static fromLine(line) {
    const match = /^ERR (\S+) ?([\s\S]*)$/.exec(line);
    if (!match) return new ScavengerError("INTERNAL", line, { line });
    const [, code, detail] = match;
    let message = detail;
    let retryAfter = null;
    let distance = null;
    // RATE_LIMITED and TOO_FAR put a number first (seconds, metres): a field of its own, as the
    // Swift client has it, and the message is what follows.
    if (code === "RATE_LIMITED" || code === "TOO_FAR") {
      const leading = /^(-?\d+)(?: ([\s\S]*))?$/.exec(detail);
      if (leading) {
        // TOO_FAR -1: a hidden stop, whose distance is not told (null).
        const number = Number(leading[1]);
        if (code === "RATE_LIMITED") retryAfter = number; else distance = number < 0 ? null : number;
        message = leading[2] || detail;
      }
    }
    return new ScavengerError(code, message, { detail, retryAfter, distance, line });
  }
}

/** A token of the protocol quoted as a JSON string literal: any text, spaces and quotes included. */
export function quote(text) { return JSON.stringify(String(text)); }

/** A fresh REQUEST key: 32 hex digits from the browser's random source (8–64 of A-Za-z0-9_-). */
export function newRequestKey() {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

// The tokens of a request line: spaces and tabs separate them, a quoted token is one JSON string.
function tokens(line) {
  const found = [];
  let i = 0;
  while (i < line.length) {
    while (line[i] === " " || line[i] === "\t") i++;
    if (i >= line.length) break;
    const start = i;
    if (line[i] === "\"") {
      i++;
      while (i < line.length && line[i] !== "\"") i += line[i] === "\\" ? 2 : 1;
      i++;
    } else {
      while (i < line.length && line[i] !== " " && line[i] !== "\t") i++;
    }
    found.push(line.slice(start, i));
  }
  return found;
}

// An id or code as a bare token when it is one, else quoted.
function word(value) {
  const text = String(value);
  return /^[A-Za-z0-9_.-]+$/.test(text) ? text : quote(text);
}

function number(value, name) {
  const text = String(value).trim();
  if (!/^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(text)) throw new TypeError(`${name}: not a number: ${value}`);
  return text;
}

function defaultURL() {
  if (!globalThis.location || !globalThis.location.host) {
    throw new TypeError("ScavengerClient: no url given and no page to take one from: pass { url: \"ws://host:port/ws\" }");
  }
  const scheme = globalThis.location.protocol === "https:" ? "wss:" : "ws:";
  return scheme + "//" + globalThis.location.host + "/ws";
}

/** One WebSocket session with the daemon, kept open across drops. */
export class ScavengerClient {
  /**
   * @param {object} [options]
   * @param {string} [options.url] the WebSocket URL; by default `/ws` of the page's own origin.
   * @param {string} [options.token] a session token (from LOGIN or REGISTER) to resume with AUTH.
   * @param {number} [options.minDelay=500] the first reconnection delay, in milliseconds.
   * @param {number} [options.maxDelay=30000] the cap of the reconnection delay.
   * @param {boolean} [options.connect=true] open the socket at once (else at the first call).
   * @param {Function} [options.WebSocket] the WebSocket class to use (default: the global one);
   *   where there is none (Node 20), pass one, e.g. the `ws` package's: the constructor throws
   *   a TypeError when it has neither.
   */
  constructor({ url, token = null, minDelay = 500, maxDelay = 30000, connect = true, WebSocket: socketClass } = {}) {
    this.url = url || defaultURL();
    this.token = token;
    this.user = null;
    this.minDelay = minDelay;
    this.maxDelay = maxDelay;
    this._WebSocket = socketClass || globalThis.WebSocket;
    if (typeof this._WebSocket !== "function") {
      // Without one every connection attempt would fail and be retried, silently, for ever.
      throw new TypeError("ScavengerClient: no WebSocket here (Node before 22 has none): "
        + "pass a WebSocket class as the WebSocket option, e.g. new ScavengerClient({ url, WebSocket })");
    }
    this._socket = null;
    this._ready = false;      // open, and the session resumed: requests go out at once
    this._closed = false;     // close() was called
    this._attempt = 0;        // failed connections in a row, for the back-off
    this._timer = null;
    this._inflight = [];      // sent on this socket, waiting for their replies, in order
    this._queue = [];         // waiting for the socket
    this._watches = new Set();
    this._byID = new Map();   // the daemon's watch id on this socket → its Watch
    this._listeners = new Map();
    // When the browser says the network is back, try at once rather than at the end of the delay.
    this._online = () => {
      if (this._timer === null || this._closed) return;
      clearTimeout(this._timer);
      this._timer = null;
      this.connect();
    };
    if (typeof globalThis.addEventListener === "function") globalThis.addEventListener("online", this._online);
    if (connect) this.connect();
  }

  /** Listens to "status" ("connecting", "connected", "disconnected", "closed"), "session"
   *  ({user, token, automatic, restored}: after LOGIN, REGISTER, AUTH and LOGOUT; `automatic`
   *  when the client sent AUTH itself on connecting, `restored` when that was a reconnection)
   *  or "event" (every EVENT). Returns a function that stops it. */
  on(name, handler) {
    if (!this._listeners.has(name)) this._listeners.set(name, new Set());
    this._listeners.get(name).add(handler);
    return () => this._listeners.get(name).delete(handler);
  }

  _emit(name, value) {
    for (const handler of this._listeners.get(name) || []) {
      try { handler(value); } catch (error) { setTimeout(() => { throw error; }); }
    }
  }

  /** True while the socket is open and the session resumed. */
  get connected() { return this._ready; }

  /** Opens the socket (done by the constructor unless `connect: false`). */
  connect() {
    if (this._closed || this._socket || this._timer !== null) return;
    this._emit("status", "connecting");
    let socket;
    try {
      socket = new this._WebSocket(this.url);
    } catch (error) {
      this._scheduleReconnect();
      return;
    }
    this._socket = socket;
    socket.onopen = () => { this._restore(socket); };
    socket.onmessage = (message) => { if (socket === this._socket) this._receive(String(message.data)); };
    socket.onclose = () => { if (socket === this._socket) this._lost(); };
    socket.onerror = () => {};  // a close follows
  }

  /** Closes for good: pending requests fail with CLOSED, watches end. */
  close() {
    this._closed = true;
    if (typeof globalThis.removeEventListener === "function") globalThis.removeEventListener("online", this._online);
    if (this._timer !== null) { clearTimeout(this._timer); this._timer = null; }
    const socket = this._socket;
    this._socket = null;
    this._ready = false;
    if (socket) { try { socket.close(); } catch (error) { /* already closing */ } }
    for (const request of [...this._inflight, ...this._queue]) request.reject(new ScavengerError("CLOSED", "the client was closed"));
    this._inflight = [];
    this._queue = [];
    for (const watch of [...this._watches]) watch._finish();
    this._emit("status", "closed");
  }

  // After the socket opens: AUTH with the token, then the watches again, then what waited.
  async _restore(socket) {
    const restored = this.user !== null;
    if (this.token) {
      try {
        const answer = await this._send(`AUTH ${quote(this.token)}`, { resend: false, now: true });
        this.user = answer.user;
        this._emit("session", { user: this.user, token: this.token, automatic: true, restored });
      } catch (error) {
        if (socket !== this._socket) return;
        if (error.code === "UNAUTHORIZED") {
          this.token = null;
          this.user = null;
          this._emit("session", { user: null, token: null, automatic: true, restored, error });
        } else {
          // UNAVAILABLE and the like: try again on a new connection, after the back-off.
          try { socket.close(); } catch (closeError) { /* closing */ }
          return;
        }
      }
    }
    if (socket !== this._socket) return;
    this._attempt = 0;
    this._ready = true;
    this._emit("status", "connected");
    for (const watch of this._watches) watch._start();
    const waiting = this._queue;
    this._queue = [];
    for (const request of waiting) this._transmit(request);
  }

  _scheduleReconnect() {
    if (this._closed || this._timer !== null) return;
    // Capped exponential back-off with jitter: between half and all of min·2^attempt, at most max.
    const delay = this._delay(this._attempt);
    this._attempt = Math.min(this._attempt + 1, 30);
    this._timer = setTimeout(() => { this._timer = null; this.connect(); }, delay);
  }

  // The socket closed: requests without their reply go back to the front of the queue (or fail
  // when they may not be resent), the watches wait for the next socket.
  _lost() {
    this._socket = null;
    this._ready = false;
    const lost = this._inflight;
    this._inflight = [];
    const again = [];
    for (const request of lost) {
      if (request.resend) again.push(request);
      else request.reject(new ScavengerError("CONNECTION_LOST",
        "the connection closed before the reply came; the request may or may not have run"));
    }
    this._queue = again.concat(this._queue);
    this._byID.clear();
    for (const watch of this._watches) watch._suspend();
    this._emit("status", "disconnected");
    this._scheduleReconnect();
  }

  _receive(line) {
    if (line.startsWith("EVENT ")) {
      let event;
      try { event = JSON.parse(line.slice(6)); } catch (error) { return; }
      const watch = this._byID.get(event.watch);
      if (watch) watch._deliver(event);
      this._emit("event", event);
      return;
    }
    const request = this._inflight.shift();
    if (!request) return;
    if (line.startsWith("OK ")) {
      let value;
      try { value = JSON.parse(line.slice(3)); } catch (error) {
        request.reject(new ScavengerError("INTERNAL", "a reply that is not JSON: " + line, { line }));
        return;
      }
      this._noteSession(request.command, value);
      // A watch takes its id before the next line is read: its events follow the OK at once.
      if (request.onOK) request.onOK(value);
      request.resolve(value);
    } else {
      const error = ScavengerError.fromLine(line);
      // UNAVAILABLE changed nothing (the database is away, the daemon saturated or still
      // loading): a request that may be sent again is, after a while, a few times.
      if (error.code === "UNAVAILABLE" && request.resend && (request.retries || 0) < UNAVAILABLE_RETRIES) this._retryLater(request);
      else request.reject(error);
    }
  }

  // The delay before attempt n (1, 2, …): between half and all of min·2^n, at most max.
  _delay(n) {
    const ceiling = Math.min(this.maxDelay, this.minDelay * 2 ** n);
    return ceiling / 2 + Math.random() * ceiling / 2;
  }

  _retryLater(request) {
    request.retries = (request.retries || 0) + 1;
    setTimeout(() => {
      if (this._closed) request.reject(new ScavengerError("CLOSED", "the client was closed"));
      else if (this._ready) this._transmit(request);
      else this._queue.push(request);
    }, this._delay(request.retries));
  }

  // LOGIN, REGISTER, RESET and a guest's JOIN start a session (kept for AUTH after a reconnection), LOGOUT ends it.
  _noteSession(command, value) {
    if ((command === "LOGIN" || command === "REGISTER" || command === "RESET" || command === "JOIN") && value && value.token) {
      this.token = value.token;
      this.user = value.user;
      this._emit("session", { user: this.user, token: this.token, restored: false });
    } else if (command === "AUTH" && value && value.user) {
      this.user = value.user;
    } else if (command === "LOGOUT") {
      this.token = null;
      this.user = null;
      this._emit("session", { user: null, token: null, restored: false });
    }
  }

  _transmit(request) {
    this._inflight.push(request);
    this._socket.send(request.line);
  }

  // Sends a line: at once when the session is ready (or `now`, on an open socket), else queued.
  _send(line, { resend, now = false, onOK = null }) {
    const command = (tokens(line)[0] || "").toUpperCase();
    return new Promise((resolve, reject) => {
      if (this._closed) { reject(new ScavengerError("CLOSED", "the client was closed")); return; }
      const request = { line, command, resend, resolve, reject, onOK };
      const socket = this._socket;
      if (this._ready || (now && socket && socket.readyState === 1)) this._transmit(request);
      else { this._queue.push(request); this.connect(); }
    });
  }

  /**
   * Sends one request line and resolves with the JSON of its `OK`, or rejects with a
   * ScavengerError. A write gets ` REQUEST <key>` appended unless the line has one (`key`
   * chooses it; `key: false` sends none, and the write is then not resent after a drop).
   */
  call(line, { key } = {}) {
    line = String(line);
    const parts = tokens(line);
    const command = (parts[0] || "").toUpperCase();
    let keyed = false;
    if (writes.has(command)) {
      keyed = parts.slice(1).some((part) => part.toUpperCase() === "REQUEST");
      if (!keyed && key !== false) { line += " REQUEST " + (key || newRequestKey()); keyed = true; }
    }
    const resend = !notResent.has(command) && (!writes.has(command) || keyed);
    return this._send(line, { resend });
  }

  // ---- Typed helpers. Numbers may be numbers or decimal strings; texts are quoted here.

  ping() { return this.call("PING"); }
  hello() { return this.call("HELLO"); }
  whoami() { return this.call("WHOAMI"); }
  login(nameOrEmail, password) { return this.call(`LOGIN ${quote(nameOrEmail)} ${quote(password)}`); }
  register(name, email, password) { return this.call(`REGISTER ${quote(name)} ${quote(email)} ${quote(password)}`); }
  /** Resumes a session with a token; the client keeps it for later reconnections. */
  async auth(token) {
    const answer = await this.call(`AUTH ${quote(token)}`);
    this.token = token;
    this.user = answer.user;
    this._emit("session", { user: this.user, token, restored: false });
    return answer;
  }
  logout() { return this.call("LOGOUT"); }
  /** Mails a password reset code, if the account exists (the answer is true either way). */
  forgot(nameOrEmail) { return this.call(`FORGOT ${quote(nameOrEmail)}`); }
  /** Sets a new password with the mailed code and signs in (other sessions end). */
  reset(username, code, newPassword) { return this.call(`RESET ${quote(username)} ${quote(code)} ${quote(newPassword)}`); }
  /** Mails a verification code (no code), or marks the email verified with it. */
  verify(code) { return this.call(code ? `VERIFY ${quote(code)}` : "VERIFY"); }

  nearby(lat, lon, radius, { limit, cursor, kind } = {}) {
    return this.call(`NEARBY ${number(lat, "lat")} ${number(lon, "lon")} ${number(radius, "radius")}`
      + opt("LIMIT", limit) + opt("CURSOR", cursor, true) + opt("KIND", kind));
  }
  /** MAP: {cells: [{lat, lon, count, box: [s, w, n, e], pin}], total}: the live pins in a box
   *  (west > east crosses the antimeridian) counted per map cell at `zoom` (0-22). */
  map(south, west, north, east, zoom, { kind, limit } = {}) {
    return this.call(`MAP ${number(south, "south")} ${number(west, "west")} ${number(north, "north")} ${number(east, "east")}`
      + opt("ZOOM", zoom) + opt("KIND", kind) + opt("LIMIT", limit));
  }
  get(id) { return this.call(`GET ${word(id)}`); }
  photo(id) { return this.call(`PHOTO ${word(id)}`); }
  /** A photo's `url` or `thumb` (a path on the HTTP port) as an absolute URL, from this client's /ws address. */
  photoURL(path) { const base = new URL(this.url); base.protocol = base.protocol === "wss:" ? "https:" : "http:"; return new URL(path, base).href; }
  post(lat, lon, text, { ttl, key } = {}) {
    return this.call(`POST ${number(lat, "lat")} ${number(lon, "lon")} ${quote(text)}` + opt("TTL", ttl), { key });
  }
  postPhoto(lat, lon, base64, { caption, ttl, key } = {}) {
    return this.call(`POSTPHOTO ${number(lat, "lat")} ${number(lon, "lon")} ${base64}`
      + opt("CAPTION", caption, true) + opt("TTL", ttl), { key });
  }
  delete(id, { key } = {}) { return this.call(`DELETE ${word(id)}`, { key }); }
  reply(id, text, { key } = {}) { return this.call(`REPLY ${word(id)} ${quote(text)}`, { key }); }
  replies(id, { limit, cursor } = {}) { return this.call(`REPLIES ${word(id)}` + opt("LIMIT", limit) + opt("CURSOR", cursor, true)); }
  report(id, reason, { note, key } = {}) { return this.call(`REPORT ${word(id)} ${reason}` + opt("NOTE", note, true), { key }); }

  /** HUNT: {hunt, stops, hints, me, winners}. `me` is the caller's standing, {points, found: [stop
   *  id…], rank}, or null; in a team hunt it is the caller's team's and adds `team` (its name), and
   *  `winners` are team names. */
  hunt(id) { return this.call(`HUNT ${word(id)}`); }
  hunts({ mine = false, near, limit, cursor } = {}) {
    const where = near ? ` NEAR ${number(near[0], "lat")} ${number(near[1], "lon")} ${number(near[2], "radius")}` : "";
    return this.call("HUNTS" + (mine ? " MINE" : "") + where + opt("LIMIT", limit) + opt("CURSOR", cursor, true));
  }
  // teams: true (the default size) or the largest team; trial: seconds; badge: the hunt's own badge's name.
  createHunt(name, { description, ordered, public: isPublic, starts, ends, duration, teams, trial, badge, key } = {}) {
    const size = typeof teams === "number" ? teams : undefined;
    return this.call(`CREATEHUNT ${quote(name)}` + opt("DESCRIPTION", description, true) + (ordered ? " ORDERED" : "")
      + (isPublic ? " PUBLIC" : "") + opt("STARTS", starts) + opt("ENDS", ends) + opt("DURATION", duration)
      + (teams ? " TEAMS" : "") + opt("SIZE", size) + opt("TRIAL", trial) + opt("BADGE", badge, true), { key });
  }
  addStop(hunt, lat, lon, radius, points, title, { clue, proof, code, hidden, key } = {}) {
    return this.call(`ADDSTOP ${word(hunt)} ${number(lat, "lat")} ${number(lon, "lon")} ${number(radius, "radius")} ${number(points, "points")} ${quote(title)}`
      + opt("CLUE", clue, true) + opt("PROOF", proof) + opt("CODE", code, true) + (hidden ? " HIDDEN" : ""), { key });
  }
  removeStop(stop, { key } = {}) { return this.call(`REMOVESTOP ${word(stop)}`, { key }); }
  /** JOIN: `as` plays under another name; `team` joins a team hunt's team of that name (found in
   *  any case, else made; quoted, so it may have spaces: "Red Foxes"). Joining again with another
   *  team moves the player. A full team is CONFLICT; a team hunt without `team`, or `team` in a
   *  hunt of single players, BAD_ARGUMENT. Resolves with {hunt}: its `teams` is the largest team,
   *  null in a hunt of single players. */
  join(codeOrID, { as, team, key } = {}) {
    return this.call(`JOIN ${word(codeOrID)}` + opt("AS", as, true) + opt("TEAM", team, true), { key });
  }
  /** JOIN code AS name GUEST (protocol 1.5): joins a hunt that takes guests, without an account,
   *  on a client with no login. Resolves with {hunt, token, user}; the token is kept for AUTH after
   *  a reconnection. Sent once, with no REQUEST key: a retry would make another guest. */
  joinAsGuest(code, name, { team } = {}) {
    return this.call(`JOIN ${word(code)} AS ${quote(name)}` + opt("TEAM", team, true) + " GUEST", { key: false });
  }
  leave(hunt, { key } = {}) { return this.call(`LEAVE ${word(hunt)}`, { key }); }
  startHunt(hunt, { key } = {}) { return this.call(`STARTHUNT ${word(hunt)}`, { key }); }
  extend(hunt, seconds, { key } = {}) { return this.call(`EXTEND ${word(hunt)} ${number(seconds, "seconds")}`, { key }); }
  endHunt(hunt, { key } = {}) { return this.call(`ENDHUNT ${word(hunt)}`, { key }); }
  hint(hunt, text, { key } = {}) { return this.call(`HINT ${word(hunt)} ${quote(text)}`, { key }); }
  /** CHECKIN: {checkin, score: {points, found, rank}}, the player's standing after it (in a team
   *  hunt the team's: a stop counts once per team). */
  checkin(stop, lat, lon, { accuracy, code, photo, key } = {}) {
    return this.call(`CHECKIN ${word(stop)} ${number(lat, "lat")} ${number(lon, "lon")}`
      + opt("ACCURACY", accuracy) + opt("CODE", code, true) + opt("PHOTO", photo), { key });
  }
  review(hunt, { limit, cursor } = {}) { return this.call(`REVIEW ${word(hunt)}` + opt("LIMIT", limit) + opt("CURSOR", cursor, true)); }
  approve(checkin, { bonus, key } = {}) { return this.call(`APPROVE ${word(checkin)}` + opt("BONUS", bonus), { key }); }
  reject(checkin, { note, key } = {}) { return this.call(`REJECT ${word(checkin)}` + opt("NOTE", note, true), { key }); }
  /** LEADERBOARD: {entries: [{rank, player, points, found, at}…], next}; a time trial's entries add
   *  `time_s`. In a team hunt each entry is a team's: `player` is the team's name and `members` its
   *  players' names (as are the `entry` of the hunt watch's `score` events; its `found` events name
   *  the member who checked in). */
  leaderboard(hunt, { limit, cursor, around } = {}) {
    return this.call(`LEADERBOARD ${word(hunt)}` + opt("LIMIT", limit) + opt("CURSOR", cursor, true) + (around ? " AROUND" : ""));
  }
  ranking({ week, limit, cursor, around } = {}) {
    return this.call("RANKING" + (week ? " WEEK" : "") + opt("LIMIT", limit) + opt("CURSOR", cursor, true) + (around ? " AROUND" : ""));
  }
  profile(username) { return this.call("PROFILE" + (username ? " " + word(username) : "")); }
  /** BADGES [username]: {badges: [{id, name, description, hunt, at}…]}, oldest first (yours without a name). */
  badges(username) { return this.call("BADGES" + (username ? " " + word(username) : "")); }

  /**
   * Watches a circle: `WATCH lat lon radius [KIND k] SNAPSHOT`, so the pins inside come first
   * (then a `ready` event), then live events. After a reconnection it resumes with `SINCE` the
   * last seq it delivered; when the daemon answers `"resumed": false` it delivers
   * `{type: "reset"}` and starts over with a new SNAPSHOT. An `overflow` is handled the same way.
   */
  watch(lat, lon, radius, { kind, onEvent } = {}) {
    const spec = { area: true, line: `WATCH ${number(lat, "lat")} ${number(lon, "lon")} ${number(radius, "radius")}` + opt("KIND", kind) };
    return this._watch(spec, onEvent);
  }

  /** Watches a hunt (`WATCH HUNT id`), re-issued after a reconnection or an overflow, each
   *  time followed by `{type: "resync", reason}`: events may have been missed, read again. */
  watchHunt(id, { onEvent } = {}) { return this._watch({ area: false, line: `WATCH HUNT ${word(id)}` }, onEvent); }

  /** Watches a box at a zoom (`WATCH MAP`): `{type: "cells", cells}` with the cells that changed,
   *  at most one a second; re-issued after a reconnection, then `{type: "resync"}`: ask MAP again. */
  watchMap(south, west, north, east, zoom, { onEvent } = {}) {
    return this._watch({ area: false, line: `WATCH MAP ${number(south, "south")} ${number(west, "west")} ${number(north, "north")}`
      + ` ${number(east, "east")} ZOOM ${number(zoom, "zoom")}` }, onEvent);
  }

  _watch(spec, onEvent) {
    const watch = new Watch(this, spec);
    if (onEvent) watch.on(onEvent);
    this._watches.add(watch);
    if (this._ready) watch._start(); else this.connect();
    return watch;
  }
}

function opt(keyword, value, quoted = false) {
  if (value === undefined || value === null || value === "") return "";
  return ` ${keyword} ${quoted ? quote(value) : String(value)}`;
}

/**
 * A watch of the client: events by `on(handler)` or `for await (const event of watch)`.
 * `ready` resolves with the first `OK` of its WATCH (and rejects with its error); for an area
 * watch, only once its first snapshot is complete (its `ready` event), so `seq` is set by then.
 * Besides the daemon's events (`pin`, `gone`, `ready`, `hunt`, `hint`, …) it delivers
 * `{type: "reset", reason}` (area: drop what you hold, a new snapshot follows),
 * `{type: "resumed", seq}` (area: the missed changes came, live again) and
 * `{type: "resync", reason}` (hunt: re-issued; read the hunt again).
 */
export class Watch {
  constructor(client, spec) {
    this.client = client;
    this.area = spec.area;
    this._line = spec.line;
    /** The daemon's id of this watch on the current connection (null between connections). */
    this.id = null;
    /** The last seq delivered with everything before it (area watches): where to resume. */
    this.seq = null;
    this.closed = false;
    this._started = false;     // an OK came once
    this._snapshotSeq = null;  // the seq of a snapshot under way, adopted at its `ready`
    this._generation = 0;
    this._handlers = new Set();
    this._iterators = new Set();
    this.ready = new Promise((resolve, reject) => { this._resolveReady = resolve; this._rejectReady = reject; });
    this.ready.catch(() => {});
  }

  on(handler) { this._handlers.add(handler); return () => this._handlers.delete(handler); }

  [Symbol.asyncIterator]() {
    const buffer = [];
    const waiters = [];
    const iterator = {
      push: (event) => { const waiter = waiters.shift(); if (waiter) waiter({ value: event, done: false }); else buffer.push(event); },
      end: () => { for (const waiter of waiters.splice(0)) waiter({ value: undefined, done: true }); },
      next: () => {
        if (buffer.length) return Promise.resolve({ value: buffer.shift(), done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => waiters.push(resolve));
      },
      return: () => { this.close(); return Promise.resolve({ value: undefined, done: true }); },
      [Symbol.asyncIterator]() { return iterator; },
    };
    this._iterators.add(iterator);
    return iterator;
  }

  /** Ends the watch (UNWATCH) and its iterators. */
  async close() {
    if (this.closed) return;
    const id = this.id;
    this._finish();
    if (id !== null && this.client.connected) await this.client._send(`UNWATCH ${id}`, { resend: false }).catch(() => {});
  }

  _finish() {
    this.closed = true;
    this._generation++;
    if (this.id !== null) this.client._byID.delete(this.id);
    this.id = null;
    this.client._watches.delete(this);
    for (const iterator of this._iterators) iterator.end();
    this._rejectReady(new ScavengerError("CLOSED", "the watch was closed"));
  }

  _emit(event) {
    for (const handler of this._handlers) {
      try { handler(event); } catch (error) { setTimeout(() => { throw error; }); }
    }
    for (const iterator of this._iterators) iterator.push(event);
  }

  _suspend() { this.id = null; this._generation++; }

  async _start(reason = "reconnect") {
    if (this.closed) return;
    const generation = ++this._generation;
    const resuming = this.area && this.seq !== null;
    const line = this.area ? this._line + (resuming ? ` SINCE ${this.seq}` : " SNAPSHOT") : this._line;
    // A snapshot again (a drop before the first one was ready, or a resume refused): start over.
    if (this.area && !resuming && this._started) this._emit({ type: "reset", reason });
    try {
      await this.client._send(line, { resend: false, onOK: (answer) => this._began(answer, generation, resuming, reason) });
    } catch (error) {
      if (generation !== this._generation || error.code === "CONNECTION_LOST" || error.code === "CLOSED") return;
      if (error.code === "UNAVAILABLE") {
        // The daemon cannot start it yet (its feed still loading, the database away): again later.
        this._retries = (this._retries || 0) + 1;
        setTimeout(() => { if (generation === this._generation && this.client.connected) this._start(reason); }, this.client._delay(this._retries));
        return;
      }
      if (!this._started) { this._rejectReady(error); this._finish(); return; }
      this._emit({ type: "error", error });
      this._finish();
    }
  }

  // The OK of a WATCH, taken as it is read (before the events that follow it).
  _began(answer, generation, resuming, reason) {
    if (generation !== this._generation) {
      // Closed or suspended meanwhile: this watch's id is of no use.
      if (this.closed && this.client.connected) this.client._send(`UNWATCH ${answer.watch}`, { resend: false }).catch(() => {});
      return;
    }
    this._retries = 0;
    this.id = answer.watch;
    this.client._byID.set(this.id, this);
    const first = !this._started;
    this._started = true;
    if (this.area) {
      if (resuming && answer.resumed === false) {
        // The log no longer reaches back to our seq: drop this one, start over with a snapshot.
        this.client._byID.delete(this.id);
        this.client._send(`UNWATCH ${this.id}`, { resend: false }).catch(() => {});
        this.id = null;
        this.seq = null;
        this._start("not-resumed");
        return;
      }
      // The replay of what was missed follows, its events carrying seqs up to the reply's: the
      // last seq delivered stays the place to resume from until they come.
      if (resuming) this._emit({ type: "resumed", seq: answer.seq });
      else this._snapshotSeq = answer.seq;
    } else if (!first) {
      this._emit({ type: "resync", reason });
    }
    // An area watch is ready when its snapshot is (its `ready` event): `seq` is set then.
    if (first && this.area) this._firstAnswer = answer;
    else if (first) this._resolveReady(answer);
  }

  _deliver(event) {
    if (this.area) {
      if (event.type === "ready") {
        this.seq = event.seq;
        this._snapshotSeq = null;
        if (this._firstAnswer) { this._resolveReady(this._firstAnswer); this._firstAnswer = null; }
      } else if (event.type === "overflow") {
        // This watch ended on the daemon: resume it on the same connection.
        this.client._byID.delete(this.id);
        this.id = null;
        this._start("overflow");
        return;
      } else if (typeof event.seq === "number" && this._snapshotSeq === null) {
        this.seq = this.seq === null ? event.seq : Math.max(this.seq, event.seq);
      }
    } else if (event.type === "overflow") {
      this.client._byID.delete(this.id);
      this.id = null;
      this._start("overflow");
      return;
    } else if (event.type === "closed") {
      // The daemon ended it for good (the player left, or the hunt was removed): not restarted.
      this._emit(event);
      this.client._byID.delete(this.id);
      this.id = null;
      this._finish();
      return;
    }
    this._emit(event);
  }
}
