import { Hunts } from "/hunts.js";
// The host's join link (an ES module of /host): for a hunt with a join code, the link that opens
// /play with the code filled in, its QR code (drawn by the daemon: POST /qr) and the code in
// large type, on the page, on the printed sheet, and full screen for a projector ("Show to the
// class"). Texts go in with textContent; the QR code is an <img> of the SVG the daemon drew.
const { element, button } = Hunts;

// The link that opens the player's page with `code` in its join form.
export function joinLink(code) {
  return `${location.origin}/play?code=${encodeURIComponent(code)}`;
}

// The QR codes drawn so far, by caption and text: each is drawn once.
const drawn = new Map();

// An <img> of the QR code of `text` (captioned `title` inside the drawing), or throws.
export async function qrImage(text, title, alt, className) {
  const key = `${title || ""}\n${text}`;
  if (!drawn.has(key)) {
    const response = await fetch("/qr", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(title ? { text, title } : { text }), cache: "no-store",
    });
    if (!response.ok) throw new Error((await response.text()).trim() || `HTTP ${response.status}`);
    drawn.set(key, "data:image/svg+xml;charset=utf-8," + encodeURIComponent(await response.text()));
  }
  const image = element("img", className || "qr");
  image.alt = alt;
  image.src = drawn.get(key);
  return image;
}

// Whether players can still join `hunt` by its code.
function joinable(hunt) { return !!hunt && !!hunt.code && Hunts.liveState(hunt) !== "ended"; }

let shown = null;   // the hunt the panel shows

// Shows the join panel for `hunt` (hidden when it has no code or has ended).
export async function showJoinPanel(hunt) {
  const panel = document.getElementById("join-panel");
  shown = hunt;
  if (!joinable(hunt)) { panel.hidden = true; closeProjector(); return; }
  const link = joinLink(hunt.code);
  const anchor = document.getElementById("join-link");
  anchor.href = link;
  anchor.textContent = link;
  panel.hidden = false;
  const holder = document.getElementById("join-qr");
  if (holder.dataset.link === link) return;
  holder.dataset.link = link;
  try {
    holder.replaceChildren(await qrImage(link, null, `QR code of the join link of ${hunt.name}`));
  } catch (error) {
    holder.replaceChildren(element("p", "error", "Could not draw the QR code: " + error.message));
  }
}

// The join card of the printed sheet: the QR code of the link, the code in large type, the link.
export async function joinCard(hunt) {
  if (!joinable(hunt)) return null;
  const card = element("figure", "qr-card join-card");
  const link = joinLink(hunt.code);
  try {
    card.append(await qrImage(link, null, `QR code of the join link of ${hunt.name}`, "link-qr"));
  } catch (error) {
    card.append(element("p", "error", "Could not draw the QR code: " + error.message));
  }
  const caption = element("figcaption");
  caption.append(element("span", "card-title", "Join the hunt"), element("span", "card-code code", hunt.code), element("span", "card-link", link));
  card.append(caption);
  return card;
}

// ---- the projector view: the code and the QR code of the link, as large as the screen allows.
async function openProjector() {
  const hunt = shown;
  if (!joinable(hunt)) return;
  const view = document.getElementById("projector");
  document.getElementById("projector-name").textContent = hunt.name;
  document.getElementById("projector-code").textContent = hunt.code;
  const link = joinLink(hunt.code);
  // The address to type is the page's; the code is typed (or comes with the scanned link).
  document.getElementById("projector-link").textContent = `${location.host}/play`;
  view.hidden = false;
  document.body.classList.add("projecting");
  document.getElementById("projector-close").focus();
  if (view.requestFullscreen && !document.fullscreenElement) view.requestFullscreen().catch(() => { /* a window then */ });
  const holder = document.getElementById("projector-qr");
  try {
    holder.replaceChildren(await qrImage(link, null, `QR code of the join link of ${hunt.name}`, "qr projector-qr"));
  } catch (error) {
    holder.replaceChildren(element("p", "error", "Could not draw the QR code: " + error.message));
  }
}

function closeProjector() {
  const view = document.getElementById("projector");
  if (view.hidden) return;
  view.hidden = true;
  document.body.classList.remove("projecting");
  if (document.fullscreenElement && document.exitFullscreen) document.exitFullscreen().catch(() => {});
}

document.getElementById("projector-button").addEventListener("click", openProjector);
document.getElementById("projector-close").addEventListener("click", closeProjector);
document.addEventListener("keydown", (key) => { if (key.key === "Escape") closeProjector(); });
// Leaving full screen (Esc, F11) closes the view too.
document.addEventListener("fullscreenchange", () => { if (!document.fullscreenElement) closeProjector(); });
document.getElementById("join-copy").replaceWith(button("Copy the link", async () => {
  if (!shown || !shown.code) return;
  try {
    await navigator.clipboard.writeText(joinLink(shown.code));
    Hunts.report("join-link", "Link copied.");
  } catch (error) {
    Hunts.report("join-link", "Copying is not allowed here: select the link and copy it.", "error");
  }
}, "small"));
