// Messages where the eye is, for both hunt pages (an ES module): what a form or a button caused
// is said right under it (and scrolled into view when it is off screen, as on a phone), what
// happens meanwhile (events, hints) comes as a toast, and a refusal reads as the client's clean
// message. Every text goes in with textContent, never as markup.

// The text of an error for people: the client's `message` (a RATE_LIMITED or TOO_FAR number is
// a field of its own there, not part of it), never the raw rest of the line.
export function errorText(error) {
  if (!error) return "Something went wrong.";
  return error.message || String(error);
}

// Where a message about `target` goes: after its form, its paragraph or its list item.
function messageHolder(target) {
  return target.closest("form, p, li, .actions") || target;
}

// Shows `text` (kind: "ok", "error", "pending") under `anchor` (an element or its id): in the
// message box right after its form (made when missing); an empty text clears it. Returns the box.
export function report(anchor, text, kind) {
  const target = typeof anchor === "string" ? document.getElementById(anchor) : anchor;
  if (!target) return null;
  const holder = messageHolder(target);
  let box = holder.nextElementSibling;
  if (!box || !box.classList.contains("form-message")) {
    box = document.createElement("div");
    box.setAttribute("role", "status");
    box.setAttribute("aria-live", "polite");
    holder.after(box);
  }
  box.className = "form-message " + (kind || "ok");
  box.textContent = text || "";
  box.hidden = !text;
  if (text) reveal(box);
  return box;
}

// Reports `error` under `anchor`, as an error.
export function reportError(anchor, error) { return report(anchor, errorText(error), "error"); }

// Scrolls `node` into view when it is not (wholly) in the viewport.
export function reveal(node) {
  const box = node.getBoundingClientRect();
  if (box.top < 0 || box.bottom > window.innerHeight) node.scrollIntoView({ block: "nearest" });
}

// A toast: what happened meanwhile (a hint, a badge, a find), fixed at the bottom of the window
// for a few seconds, whatever the page shows.
let toastTimer = null;
export function toast(text, kind) {
  let box = document.getElementById("toast");
  if (!box) {
    box = document.createElement("div");
    box.id = "toast";
    box.setAttribute("role", "status");
    box.setAttribute("aria-live", "polite");
    document.body.append(box);
  }
  box.className = "toast" + (kind ? " " + kind : "");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, 8000);
}
