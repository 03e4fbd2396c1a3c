// Why a page cannot have the device's location, in words a player can act on. Browsers give the
// location only to a secure page: one served over https://, or from this very device
// (localhost). A hunt served over plain http:// on a LAN address is not secure, and the browser
// refuses the location with a generic error (Chromium: "Only secure origins are allowed"; others
// a permission error), which "allow this page to use your location" cannot fix.

/** The message shown when the page needs HTTPS for the location. */
export const HTTPS_NEEDED = "Your location needs this page over HTTPS (https://…). Ask the organizer for the https address.";

/** Whether `hostname` is this device (where browsers count plain http:// as secure). */
export function isLocalHost(hostname) {
  const host = String(hostname || "").toLowerCase().replace(/^\[|\]$/g, "");
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * The message for a location that could not be had, when the cause is a page that is not
 * secure; null for any other cause. `error` is the geolocation error, if any; `page` holds
 * `isSecureContext` and `location` (the window, by default).
 */
export function locationNeedsHTTPS(error, page = globalThis) {
  const insecure = page.isSecureContext === false && !isLocalHost(page.location && page.location.hostname);
  const said = /secure (origin|context)|https/i.test(String((error && error.message) || ""));
  return insecure || said ? HTTPS_NEEDED : null;
}
