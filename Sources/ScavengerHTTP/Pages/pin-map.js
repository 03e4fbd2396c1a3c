// The pins on a Leaflet map at any zoom, from MAP (an ES module over scavenger.js's client and the
// global `L`): the view's pins counted in cells of the Web Mercator grid, about 64 screen pixels
// each. A cell of several pins is a round marker with its count; a click zooms to the cell's box
// until its pins come apart. A cell of one pin is the pin: a photo's shows its thumbnail (the
// 256-pixel size the daemon makes, /photos/ID?size=thumb), a message a dot with its text.
// The view is asked again after each move, and when WATCH MAP says its cells changed (at most
// once a second). Every text from the server goes in with textContent, never as markup.

/** Pins per cell are drawn at most this many cells at a time (MAP's LIMIT keeps the fullest). */
const CELL_LIMIT = 500;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function wrapLongitude(lon) {
  if (lon >= -180 && lon <= 180) return lon;
  return ((lon + 180) % 360 + 360) % 360 - 180;
}

/** How a count reads on a marker: 1,234 as "1.2k". */
function shortCount(count) {
  if (count < 1000) return String(count);
  if (count < 10000) return (count / 1000).toFixed(1).replace(/\.0$/, "") + "k";
  return Math.round(count / 1000) + "k";
}

export class PinLayer {
  /** Draws the pins of `client` (a ScavengerClient) on `map`; `kind` ("text" or "photo") keeps
   *  one kind; `onError(error)` hears a MAP that failed; `describe(total, cells)` each answer. */
  constructor(map, client, { kind, onError, describe } = {}) {
    this.map = map;
    this.client = client;
    this.kind = kind;
    this.onError = onError;
    this.describe = describe;
    // The pins lie in a pane of their own, under the page's overlays (a hunt's stops stay on top).
    if (!map.getPane("pins")) map.createPane("pins").style.zIndex = "350";
    this.layer = L.layerGroup().addTo(map);
    this.generation = 0;
    this.watch = null;
    this.watchedView = "";
    this.refreshTimer = null;
    this.total = 0;
    this.cells = [];
    map.on("moveend", () => this.refresh());
    // A map laid out late (its section shown after a move) asks when it gets its size.
    map.on("resize", () => this.refresh());
  }

  /** The view as MAP asks for it: [south, west, north, east, zoom], longitudes within ±180
   *  (west > east when the view crosses the antimeridian), the whole world when it is wider. */
  view() {
    const bounds = this.map.getBounds();
    const south = Math.max(-90, bounds.getSouth());
    const north = Math.min(90, bounds.getNorth());
    let west = bounds.getWest();
    let east = bounds.getEast();
    if (east - west >= 360) { west = -180; east = 180; } else { west = wrapLongitude(west); east = wrapLongitude(east); }
    const zoom = Math.max(0, Math.min(22, Math.round(this.map.getZoom())));
    return [south, west, north, east, zoom].map((value) => Number(value.toFixed(6)));
  }

  /** Asks MAP for the view now and draws the answer (a newer request's answer wins). */
  async refresh() {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = null;
    // A map not laid out yet (its page section hidden) has no view: its resize or move asks.
    const size = this.map.getSize();
    if (size.x === 0 || size.y === 0) return;
    const generation = ++this.generation;
    const view = this.view();
    let answer;
    try {
      answer = await this.client.map(...view, { kind: this.kind, limit: CELL_LIMIT });
    } catch (error) {
      this.lastError = error;
      if (this.onError) this.onError(error);
      return;
    }
    if (generation !== this.generation) return;
    this.draw(answer);
    this.follow(view);
  }

  /** A refresh soon: several changes close together cost one MAP. */
  refreshSoon() {
    if (this.refreshTimer === null) this.refreshTimer = setTimeout(() => this.refresh(), 250);
  }

  // WATCH MAP of the view, opened again when the view changed.
  follow(view) {
    const key = view.join(" ");
    if (key === this.watchedView && this.watch && !this.watch.closed) return;
    if (this.watch) this.watch.close();
    this.watchedView = key;
    this.watch = this.client.watchMap(...view, {
      onEvent: (event) => { if (event.type === "cells" || event.type === "resync") this.refreshSoon(); },
    });
    this.watch.ready.catch((error) => { if (this.onError && error.code !== "CLOSED") this.onError(error); });
  }

  draw(answer) {
    this.layer.clearLayers();
    this.total = answer.total;
    this.cells = answer.cells;
    for (const cell of answer.cells) {
      this.layer.addLayer(cell.count === 1 && cell.pin ? this.pinMarker(cell.pin) : this.cellMarker(cell));
    }
    const container = this.map.getContainer();
    container.dataset.pinTotal = String(answer.total);
    container.dataset.pinCells = String(answer.cells.length);
    if (this.describe) this.describe(answer.total, answer.cells);
  }

  cellMarker(cell) {
    const size = cell.count < 10 ? 30 : cell.count < 100 ? 36 : cell.count < 1000 ? 42 : 50;
    const face = element("span", "count", shortCount(cell.count));
    const icon = L.divIcon({ className: "pin-cell", html: face, iconSize: [size, size] });
    const marker = L.marker([cell.lat, cell.lon], { icon, title: `${cell.count} pins`, keyboard: true, pane: "pins" });
    marker.on("click", () => {
      const [south, west, north, east] = cell.box;
      const before = this.map.getZoom();
      this.map.fitBounds([[south, west], [north, east]], { maxZoom: this.map.getMaxZoom() });
      // At the map's deepest zoom the pins stand too close to come apart: say how many.
      if (this.map.getZoom() === before && before >= this.map.getMaxZoom()) {
        marker.bindPopup(element("span", null, `${cell.count} pins within a few metres`)).openPopup();
      }
    });
    return marker;
  }

  pinMarker(pin) {
    // A photo pin's object carries its paths on the HTTP port: `url` and `thumb`.
    const photo = pin.kind === "photo" && pin.thumb ? { url: pin.url, thumb: pin.thumb } : null;
    let marker;
    if (photo) {
      const image = element("img", "thumb");
      image.src = this.client.photoURL(photo.thumb);
      image.alt = `Photo by ${pin.author}`;
      image.width = 40;
      image.height = 40;
      const icon = L.divIcon({ className: "pin-photo", html: image, iconSize: [44, 44] });
      marker = L.marker([pin.lat, pin.lon], { icon, title: `Photo by ${pin.author}`, keyboard: true, pane: "pins" });
    } else {
      marker = L.circleMarker([pin.lat, pin.lon], { radius: 7, color: "#fff", weight: 2, fillColor: "#1a6bb8", fillOpacity: 1, pane: "pins" });
    }
    marker.bindPopup(() => this.popup(pin, photo));
    return marker;
  }

  popup(pin, photo) {
    const box = element("div", "pin-popup");
    box.dataset.id = pin.id;
    if (photo) {
      const image = element("img", "popup-thumb");
      image.src = this.client.photoURL(photo.thumb);
      image.alt = pin.text || `Photo by ${pin.author}`;
      const link = element("a");
      link.href = this.client.photoURL(photo.url);
      link.target = "_blank";
      link.rel = "noopener";
      link.append(image);
      box.append(link);
    }
    if (pin.text) box.append(element("div", "pin-text", pin.text));
    box.append(element("div", "meta", `by ${pin.author} · ${pin.created}`));
    return box;
  }

  /** Stops following the view and takes the pins off the map. */
  remove() {
    if (this.watch) this.watch.close();
    this.watch = null;
    this.layer.remove();
  }
}
