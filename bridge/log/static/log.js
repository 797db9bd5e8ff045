// Sightline log, session page: draws the scene's zones and walls (from the ruling's snapshot), the tokens
// the ruling read (its situation) and the selected ruling's sight line into the page's SVG map. Reads the
// JSON block #log-data that the server renders (each ruling's line, tokens and snapshot key, the words and
// the one palette, bridge/palette.json) and fetches a snapshot from the log's API the first time it is
// drawn (the page never carries them: it stays small however many scene versions it shows).
// The caption names the selected row at once, before its snapshot arrives. No dependencies.
"use strict";

(function () {
  const NS = "http://www.w3.org/2000/svg";
  const dataNode = document.getElementById("log-data");
  const svg = document.getElementById("map");
  const caption = document.getElementById("map-caption");
  if (!dataNode || !svg) return;
  const data = JSON.parse(dataNode.textContent);
  const palette = data.palette || { zones: {}, other: "#9e9e9e", verdicts: {} };
  const zoneColour = (type) => palette.zones[type] || palette.other;
  // Overlay and demo read a ruling alike: not allowed → blocked, a MOD below zero → penalised, else clear.
  const verdictColour = (ruling) => palette.verdicts[
    !ruling.allowed ? "blocked" : ruling.modifier !== null && ruling.modifier !== undefined && ruling.modifier < 0
      ? "penalised" : "clear"] || "#000000";

  function signed(value) {
    if (value === null || value === undefined) return "—";
    return value > 0 ? `+${value}` : value < 0 ? `\u2212${Math.abs(value)}` : "0";
  }

  // "Sol → Ana · BS Attack · MOD −6 · Difficult · Docks": names and labels, never pixels or ids.
  function captionOf(ruling) {
    if (!ruling) return data.texts.help;
    const who = ruling.target ? `${ruling.actor} → ${ruling.target}` : ruling.actor;
    const parts = [who, ruling.action];
    if (ruling.modifier !== null && ruling.modifier !== undefined) parts.push(`${data.texts.mod} ${signed(ruling.modifier)}`);
    if (ruling.difficulty) parts.push(ruling.difficulty);
    if (ruling.scene) parts.push(ruling.scene);
    if (!ruling.line) parts.push(data.texts.noLine);
    const after = ruling.after;
    if (after) parts.push(`${data.texts.rejudged}: ${after.modifier === null || after.modifier === undefined ? "—" : `${data.texts.mod} ${signed(after.modifier)}`}`);
    return parts.join(" · ");
  }

  function el(name, attrs, parent) {
    const node = document.createElementNS(NS, name);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    if (parent) parent.appendChild(node);
    return node;
  }

  // Points of a shape's outline (for bounds) and the SVG element that draws it.
  function shapeElement(shape, parent, style) {
    const type = shape.type;
    if (type === "circle") {
      el("circle", { cx: shape.x, cy: shape.y, r: shape.radius, ...style }, parent);
      return [[shape.x - shape.radius, shape.y - shape.radius], [shape.x + shape.radius, shape.y + shape.radius]];
    }
    if (type === "ellipse") {
      const rx = shape.radiusX, ry = shape.radiusY, rot = shape.rotation || 0;
      el("ellipse", { cx: shape.x, cy: shape.y, rx, ry, transform: `rotate(${rot} ${shape.x} ${shape.y})`, ...style }, parent);
      const r = Math.max(rx, ry);
      return [[shape.x - r, shape.y - r], [shape.x + r, shape.y + r]];
    }
    if (type === "rectangle") {
      const cx = shape.x + shape.width / 2, cy = shape.y + shape.height / 2, rot = shape.rotation || 0;
      el("rect", { x: shape.x, y: shape.y, width: shape.width, height: shape.height,
        transform: `rotate(${rot} ${cx} ${cy})`, ...style }, parent);
      const r = Math.hypot(shape.width, shape.height) / 2;
      return [[cx - r, cy - r], [cx + r, cy + r]];
    }
    const points = shape.points || [];
    const pairs = [];
    for (let i = 0; i + 1 < points.length; i += 2) pairs.push([points[i], points[i + 1]]);
    if (pairs.length) el("polygon", { points: pairs.map((p) => p.join(",")).join(" "), ...style }, parent);
    return pairs;
  }

  const snapshots = new Map();  // key -> Promise of the snapshot (or null when it cannot be read)
  function snapshotFor(key) {
    if (!key) return Promise.resolve(null);
    if (!snapshots.has(key)) {
      const url = data.snapshotUrl + encodeURIComponent(key);
      snapshots.set(key, fetch(url, { credentials: "same-origin" })
        .then((response) => (response.ok ? response.json() : null))
        .catch(() => null));
    }
    return snapshots.get(key);
  }

  let drawing = 0;  // a later selection wins over a fetch still under way
  async function draw(recordId) {
    const ruling = recordId ? data.rulings[recordId] : null;
    // A ruling names its snapshot by its number in data.snapshots (each key is sent once).
    const first = Object.values(data.rulings).find((r) => r.snapshot !== null && r.snapshot !== undefined);
    const number = ruling ? ruling.snapshot : first && first.snapshot;
    const snapshotKey = number === null || number === undefined ? null : data.snapshots[number];
    const turn = ++drawing;
    const snapshot = await snapshotFor(snapshotKey);
    if (turn !== drawing) return;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const zones = el("g", { class: "zones" }, svg);
    const zoneNames = el("g", { class: "zone-names" });  // added last: names stay readable over lines
    const bounds = [];
    for (const region of (snapshot && snapshot.regions) || []) {
      const zone = (region.zone && region.zone.type) || "";
      const colour = zoneColour(zone);
      const group = el("g", { class: "zone", "data-region": region.id, "data-zone": zone }, zones);
      const zoneLabel = (data.zones && data.zones[zone]) || zone;
      el("title", {}, group).textContent = region.name ? `${region.name} (${zoneLabel})` : zoneLabel;
      const fill = { fill: colour, "fill-opacity": 0.35, stroke: colour, "stroke-width": 3 };
      const hole = { fill: "#ffffff", "fill-opacity": 1, stroke: colour, "stroke-dasharray": "6 4" };
      const outlines = region.polygons && region.polygons.length
        ? region.polygons.map((p) => ({ type: "polygon", points: p.points, hole: p.hole }))
        : region.shapes || [];
      const own = [];
      for (const shape of outlines.filter((s) => !s.hole)) own.push(...shapeElement(shape, group, fill));
      for (const shape of outlines.filter((s) => s.hole)) shapeElement(shape, group, hole);
      if (own.length) {
        const cx = own.reduce((sum, p) => sum + p[0], 0) / own.length;
        const cy = own.reduce((sum, p) => sum + p[1], 0) / own.length;
        const label = el("text", { x: cx, y: cy, "text-anchor": "middle", "dominant-baseline": "central",
          "font-size": 32, "data-size": 11, "font-style": "italic", fill: "#1d232a", stroke: "#ffffff", "stroke-width": "0.2em",
          "paint-order": "stroke", "font-family": "system-ui, sans-serif", class: "zone-name" }, zoneNames);
        label.textContent = region.name || (data.zones && data.zones[(region.zone || {}).type]) || "";
        bounds.push(...own);
      }
    }
    const walls = el("g", { class: "walls" }, svg);
    for (const wall of (snapshot && snapshot.walls) || []) {
      const [x1, y1, x2, y2] = wall.c;
      const sight = wall.sight === true ? 20 : wall.sight === false ? 0 : wall.sight;
      const open = wall.door && wall.ds === 1;  // an open door never blocks
      el("line", { x1, y1, x2, y2, stroke: open ? "#95a5a6" : "#111", "stroke-width": 6, "stroke-linecap": "round",
        "stroke-dasharray": sight === 0 || open ? "4 8" : sight === 10 ? "14 6" : "none",
        "data-wall": wall.id }, walls);
      bounds.push([x1, y1], [x2, y2]);
    }
    const grid = (snapshot && snapshot.grid && snapshot.grid.size) || 100;
    const tokens = el("g", { class: "tokens" }, svg);
    for (const token of (ruling && ruling.tokens) || []) {
      // Foundry keeps a token's top-left corner and its size in grid squares.
      const w = (token.w || 1) * grid, h = (token.h || 1) * grid, cx = token.x + w / 2, cy = token.y + h / 2;
      const role = token.role || "other";  // the page leaves out the size 1 and the role "other"
      const r = Math.max(Math.min(w, h) / 2 - 4, 6);
      const ring = role === "other" ? "#68737d" : verdictColour(ruling);
      const group = el("g", { class: `token ${role}` }, tokens);
      el("title", {}, group).textContent = token.name;
      el("circle", { cx, cy, r, fill: "#ffffff", "fill-opacity": 0.85, stroke: ring,
        "stroke-width": role === "other" ? 3 : 6 }, group);
      el("text", { x: cx, y: cy - r - 14, "text-anchor": "middle", "dominant-baseline": "central", "font-size": 28,
        "data-size": 12, "data-above": cy - r,
        "font-weight": 700, fill: "#111111", stroke: "#ffffff", "stroke-width": "0.2em", "paint-order": "stroke",
        "font-family": "system-ui, sans-serif" }, group).textContent = token.name;
      bounds.push([cx - w / 2, cy - h / 2 - 40], [cx + w / 2, cy + h / 2]);
    }
    const line = ruling && ruling.line;
    if (line && line.start && line.end) {
      const colour = verdictColour(ruling);
      el("line", { class: "sight", x1: line.start.x, y1: line.start.y, x2: line.end.x, y2: line.end.y,
        stroke: colour, "stroke-width": 5, "stroke-dasharray": ruling.allowed ? "none" : "14 8" }, svg);
      el("circle", { class: "actor", cx: line.start.x, cy: line.start.y, r: 10, fill: colour }, svg);
      el("circle", { class: "target", cx: line.end.x, cy: line.end.y, r: 10, fill: "none", stroke: colour,
        "stroke-width": 4 }, svg);
      bounds.push([line.start.x, line.start.y], [line.end.x, line.end.y]);
      const after = ruling.after;
      if (after && after.line && after.line.start && after.line.end) {
        // The re-judged ruling's line, dashed beside the original, in its own verdict's colour.
        const again = after.line;
        el("line", { class: "sight rejudged", x1: again.start.x, y1: again.start.y, x2: again.end.x, y2: again.end.y,
          stroke: verdictColour(after), "stroke-width": 5, "stroke-dasharray": "14 10",
          transform: "translate(10 10)" }, svg);
      }
    }
    svg.appendChild(zoneNames);
    if (bounds.length) {
      const xs = bounds.map((b) => b[0]), ys = bounds.map((b) => b[1]);
      const minX = Math.min(...xs), maxX = Math.max(...xs), minY = Math.min(...ys), maxY = Math.max(...ys);
      const pad = Math.max(maxX - minX, maxY - minY, 100) * 0.08;
      svg.setAttribute("viewBox", `${minX - pad} ${minY - pad} ${maxX - minX + 2 * pad} ${maxY - minY + 2 * pad}`);
      // Labels keep one size on screen whatever the scene's size: a share of the drawing's width.
      const unit = (maxX - minX + 2 * pad) / 440;
      for (const text of svg.querySelectorAll("text[data-size]")) {
        text.setAttribute("font-size", Number(text.dataset.size) * unit);
        if (text.dataset.above) text.setAttribute("y", Number(text.dataset.above) - Number(text.dataset.size) * unit);
      }
    }
  }

  function select(row) {
    for (const other of document.querySelectorAll("tr.ruling[aria-selected=true]")) {
      other.setAttribute("aria-selected", "false");
    }
    row.setAttribute("aria-selected", "true");
    // The caption follows the row now, not when (or whether) its snapshot arrives.
    if (caption) caption.textContent = captionOf(data.rulings[row.dataset.record]);
    draw(row.dataset.record);
  }

  // The table is one tab stop: the row last moved to holds it (tabindex 0), the arrow keys, Home and End
  // move between rows, Enter or Space selects one (as a click does).
  const rows = [...document.querySelectorAll("tr.ruling")];
  function focusRow(row) {
    for (const other of rows) other.tabIndex = other === row ? 0 : -1;
    row.focus();
  }
  const moves = { ArrowDown: 1, ArrowUp: -1, Home: -Infinity, End: Infinity };
  // Each row's "Why" opens with a click, or with Enter on its row: not one more tab stop per row. Its text
  // is in the page once per distinct one (<template id="why-N">), put into the row's <details> when it opens.
  function fillWhy(details) {
    if (details.dataset.filled) return;
    const template = document.getElementById(`why-${details.dataset.why}`);
    if (template) details.appendChild(template.content.cloneNode(true));
    details.dataset.filled = "true";
  }
  for (const details of document.querySelectorAll("#rulings details.why[data-why]")) {
    details.querySelector("summary").tabIndex = -1;
    details.addEventListener("toggle", () => { if (details.open) fillWhy(details); });
  }
  rows.forEach((row, index) => {
    row.addEventListener("click", () => { focusRow(row); select(row); });
    row.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        select(row);
        const why = row.querySelector("details.why");  // from the keyboard, its reasons and sources open too
        if (why) { fillWhy(why); why.open = true; }
      } else if (event.key in moves) {
        event.preventDefault();
        const to = Math.min(rows.length - 1, Math.max(0, index + moves[event.key]));
        focusRow(rows[to]);
      }
    });
  });
  draw(null);
})();
