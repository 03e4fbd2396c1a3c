// The map the pages draw on (the demo, /play, /host), an ES module over Leaflet (the global `L`,
// from /vendor/leaflet/): OpenStreetMap's tiles when they can be reached, else a plain grid.
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

/** A Leaflet map in the element `elementID`, its line `note` saying which map it draws. */
export function makeMap(elementID, note) {
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

