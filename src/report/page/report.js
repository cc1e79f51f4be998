"use strict";
(function () {
  const D = JSON.parse(document.getElementById("footprint-data").textContent);
  const S = D.summary, T = D.timeline, L = D.layout, STEPS = D.steps;
  const SVGNS = "http://www.w3.org/2000/svg";
  // Bottom to top: the arena's categories first, so the lower bound and the planned arena
  // (horizontal lines) read directly against them.
  const CATS = [
    { key: "act", name: "activations", color: "#4e79a7" },
    { key: "ws", name: "workspace", color: "#f28e2b" },
    { key: "out", name: "outputs", color: "#59a14f" },
    { key: "in", name: "inputs", color: "#edc948" },
    { key: "w", name: "weights", color: "#bab0ac" },
  ];
  const LB_COLOR = "#e15759", ARENA_COLOR = "#6b3fa0", MEASURED_COLOR = "#111111";

  // ---- small helpers ----------------------------------------------------------------------
  function human(b) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let u = 0, v = b;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; ++u; }
    return (u === 0 ? String(v) : v.toFixed(v < 10 ? 2 : 1)) + " " + units[u];
  }
  function exact(b) { return b.toLocaleString("en-US") + " B"; }
  function el(tag, attrs, parent, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function svg(tag, attrs, parent, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function stepName(i) { return i >= 0 && i < STEPS.name.length ? STEPS.name[i] : "?"; }
  function stepOp(i) { return i >= 0 && i < STEPS.op.length ? STEPS.ops[STEPS.op[i]] : "?"; }
  function stepLabel(i) { return "step " + i + ": " + stepName(i) + " (" + stepOp(i) + ")"; }
  // Largest index j with xs[j] <= v (xs ascending), or 0.
  function floorIndex(xs, v) {
    let lo = 0, hi = xs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (xs[mid] <= v) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  // Tick values 1, 2 or 5 times a power of ten in the unit that suits `max` bytes.
  function byteTicks(max) {
    let unit = 1;
    while (max / unit >= 1024 * 1.5 && unit < Math.pow(1024, 4)) unit *= 1024;
    return numberTicks(max / unit).map((v) => v * unit);
  }
  // Step ticks: whole steps only.
  function stepTicks(n) { return numberTicks(Math.max(n, 1), Math.min(10, Math.max(n, 1))); }
  function numberTicks(max, count) {
    count = count || 5;
    if (!(max > 0)) return [0];
    const raw = max / count, p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) || 10 * p;
    const out = [];
    for (let v = 0; v <= max * 1.0001; v += step) out.push(Math.round(v * 1e6) / 1e6);
    return out;
  }

  const tip = document.getElementById("tip");
  function showTip(ev, text) {
    tip.textContent = text;
    tip.style.display = "block";
    const x = ev.clientX + 14, y = ev.clientY + 14;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.min(x, window.innerWidth - w - 8) + "px";
    tip.style.top = (y + h > window.innerHeight ? ev.clientY - h - 10 : y) + "px";
  }
  function hideTip() { tip.style.display = "none"; }

  // A sortable table: columns are {name, num, value(row), text(row)?, cls?}.
  function table(id, columns, rows, sortColumn) {
    const t = document.getElementById(id);
    let sortBy = sortColumn, desc = true;
    function draw() {
      t.textContent = "";
      const head = el("tr", {}, el("thead", {}, t));
      columns.forEach((c, i) => {
        const cls = (c.num ? "num" : "") + (i === sortBy ? " sorted" + (desc ? "" : " asc") : "");
        const th = el("th", { class: cls }, head, c.name);
        th.addEventListener("click", () => {
          desc = sortBy === i ? !desc : true;
          sortBy = i;
          draw();
        });
      });
      const sorted = rows.slice();
      if (sortBy !== undefined) {
        const v = columns[sortBy].value;
        sorted.sort((a, b) => {
          const x = v(a), y = v(b);
          const c = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
          return desc ? -c : c;
        });
      }
      const body = el("tbody", {}, t);
      const frag = document.createDocumentFragment();
      for (const r of sorted) {
        const tr = el("tr", {}, frag);
        for (const c of columns) {
          const td = el("td", { class: c.cls || (c.num ? "num" : "") }, tr);
          if (c.render) c.render(td, r); else td.textContent = c.text ? c.text(r) : c.value(r);
        }
      }
      body.appendChild(frag);
    }
    draw();
  }

  // ---- header -----------------------------------------------------------------------------
  function drawHeader() {
    document.getElementById("title").textContent = S.title;
    const dims = Object.keys(S.dims).map((k) => k + "=" + S.dims[k]).join(", ");
    document.getElementById("subtitle").textContent =
      (S.kind === "trace" ? "trace" : "model") + " \u00b7 order: " + S.order +
      " \u00b7 inputs: " + S.inputs + " \u00b7 " + S.steps.toLocaleString("en-US") + " steps \u00b7 " +
      S.buffers.toLocaleString("en-US") + " arena buffers" + (dims ? " \u00b7 dims " + dims : "");
    const cards = document.getElementById("cards");
    const ratio = S.lowerBoundArena > 0 ? S.arena / S.lowerBoundArena : 1;
    const items = [
      ["total peak", human(S.totalPeak),
       S.peakStep >= 0 ? "at " + stepLabel(S.peakStep) : "no steps"],
      ["lower bound", human(S.lowerBound), human(S.lowerBoundArena) + " with 64-byte buffers"],
      ["planned arena", human(S.arena),
       S.algorithm + (S.optimal ? ", optimal" : ", " + ratio.toFixed(3) + "\u00d7 the bound")],
      ["weights", human(S.weights), "not in the arena"],
      ["inputs", human(S.inputsBytes), S.inputs === "caller" ? "held by the caller" : "donated"],
      ["outputs", human(S.outputs), "never freed"],
      ["activations", human(S.activationsPeak), "at their peak"],
      ["workspace", human(S.workspacePeak), "largest step"],
      ["after the run", human(S.after), "outputs and what is still held"],
    ];
    for (const [label, value, sub] of items) {
      const c = el("div", { class: "card", title: sub }, cards);
      el("span", {}, c, label);
      el("b", {}, c, value);
      el("span", {}, c, sub);
    }
    const w = document.getElementById("warnings");
    for (const text of S.warnings) el("div", { class: "note warn" }, w, "warning: " + text);
    const more = S.warningCount - S.warnings.length;
    if (more > 0) el("div", { class: "note warn" }, w, more + " more warnings (footprint analyze lists them)");
  }

  // ---- timeline ---------------------------------------------------------------------------
  const shown = { act: true, ws: true, out: true, in: true, w: true, lb: true, arena: true,
                  m: true };
  const TL = { W: 1320, H: 380, l: 72, r: 18, t: 18, b: 34 };

  // Per drawn point, the value of a category (weights are the same in every step).
  function catValue(key, j) { return key === "w" ? T.w : T[key][j]; }

  function drawTimeline() {
    const root = document.getElementById("timeline");
    root.textContent = "";
    const n = Math.max(T.n, 1), pw = TL.W - TL.l - TL.r, ph = TL.H - TL.t - TL.b;
    const m = T.x.length;
    // Stack tops per category, bottom to top.
    const tops = [];
    const base = new Float64Array(m);
    for (const c of CATS) {
      const top = new Float64Array(m);
      for (let j = 0; j < m; ++j) top[j] = base[j] + (shown[c.key] ? catValue(c.key, j) : 0);
      tops.push({ cat: c, bottom: base.slice(), top: top });
      base.set(top);
    }
    let ymax = 0;
    for (let j = 0; j < m; ++j) ymax = Math.max(ymax, base[j]);
    if (shown.lb) ymax = Math.max(ymax, S.lowerBound);
    if (shown.arena) ymax = Math.max(ymax, S.arena);
    if (shown.m && T.m) for (const v of T.m) ymax = Math.max(ymax, v);
    ymax = ymax > 0 ? ymax * 1.06 : 1;
    const X = (s) => TL.l + (s / n) * pw;
    const Y = (v) => TL.t + ph - (v / ymax) * ph;

    // Grid and axes.
    const grid = svg("g", {}, root);
    for (const v of byteTicks(ymax)) {
      svg("line", { x1: TL.l, x2: TL.W - TL.r, y1: Y(v), y2: Y(v), stroke: "#eee" }, grid);
      svg("text", { x: TL.l - 6, y: Y(v) + 4, "text-anchor": "end" }, grid, human(v));
    }
    for (const s of stepTicks(n)) {
      if (s > n) continue;
      svg("line", { x1: X(s), x2: X(s), y1: TL.t + ph, y2: TL.t + ph + 4, stroke: "#999" }, grid);
      svg("text", { x: X(s), y: TL.t + ph + 16, "text-anchor": "middle" }, grid, String(s));
    }
    svg("text", { x: TL.W - TL.r, y: TL.H - 4, "text-anchor": "end" }, grid, "step");

    // Phases (forward, backward, optimizer) of a recorded trace: a line where each begins.
    // Labels alternate between two rows so that a short phase's does not cover the next one's.
    (D.phases || []).forEach((p, k) => {
      svg("line", { x1: X(p.from), x2: X(p.from), y1: TL.t, y2: TL.t + ph, stroke: "#8a6d3b",
                    "stroke-dasharray": "4 3" }, grid);
      svg("text", { x: X(p.from) + 4, y: TL.t + 26 + (k % 2) * 14, class: "halo",
                    style: "fill:#8a6d3b" }, grid, p.name + " " + p.from + "\u2013" + p.to);
    });

    // One stepped band per category: a drawn point holds until the next one.
    for (const band of tops) {
      if (!shown[band.cat.key] || m === 0) continue;
      const pts = [];
      for (let j = 0; j < m; ++j) {
        const x0 = X(T.x[j]), x1 = X(j + 1 < m ? T.x[j + 1] : T.x[j] + 1);
        pts.push(x0.toFixed(1) + "," + Y(band.top[j]).toFixed(1));
        pts.push(x1.toFixed(1) + "," + Y(band.top[j]).toFixed(1));
      }
      for (let j = m - 1; j >= 0; --j) {
        const x0 = X(T.x[j]), x1 = X(j + 1 < m ? T.x[j + 1] : T.x[j] + 1);
        pts.push(x1.toFixed(1) + "," + Y(band.bottom[j]).toFixed(1));
        pts.push(x0.toFixed(1) + "," + Y(band.bottom[j]).toFixed(1));
      }
      svg("path", { d: "M" + pts.join("L") + "Z", fill: band.cat.color, "fill-opacity": 0.85,
                    stroke: band.cat.color, "stroke-width": 0.5 }, root);
    }

    // The lower bound and the planned arena, both measured from zero like the arena's bands.
    function hline(v, color, dash, label, below) {
      svg("line", { x1: TL.l, x2: TL.W - TL.r, y1: Y(v), y2: Y(v), stroke: color,
                    "stroke-width": 1.6, "stroke-dasharray": dash }, root);
      svg("text", { x: TL.W - TL.r - 4, y: Y(v) + (below ? 13 : -4), "text-anchor": "end",
                    class: "halo", style: "fill:" + color }, root, label + " " + human(v));
    }
    if (shown.arena) hline(S.arena, ARENA_COLOR, "", "planned arena", false);
    if (shown.lb) hline(S.lowerBound, LB_COLOR, "6 4", "lower bound", true);

    // With --run: what the run measured after each step, on top of the prediction.
    if (shown.m && T.m && m > 0) {
      const pts = [];
      for (let j = 0; j < m; ++j) {
        const x0 = X(T.x[j]), x1 = X(j + 1 < m ? T.x[j + 1] : T.x[j] + 1);
        pts.push(x0.toFixed(1) + "," + Y(T.m[j]).toFixed(1));
        pts.push(x1.toFixed(1) + "," + Y(T.m[j]).toFixed(1));
      }
      svg("path", { d: "M" + pts.join("L"), fill: "none", stroke: MEASURED_COLOR,
                    "stroke-width": 2 }, root);
    }

    // The peak: the step with the most bytes live, all categories together.
    if (S.peakStep >= 0 && m > 0) {
      const j = floorIndex(T.x, S.peakStep);
      const px = X(S.peakStep + 0.5), py = Y(base[j]);
      svg("line", { x1: px, x2: px, y1: TL.t, y2: TL.t + ph, stroke: "#222",
                    "stroke-dasharray": "2 3" }, root);
      svg("circle", { cx: px, cy: py, r: 4, fill: "#222" }, root);
      const right = px < TL.l + pw * 0.7;
      svg("text", { x: px + (right ? 7 : -7), y: TL.t + 11, "text-anchor": right ? "start" : "end",
                    class: "halo", style: "font-weight:600" }, root,
          "peak " + human(S.totalPeak) + " at step " + S.peakStep + " (" + stepName(S.peakStep) + ")");
    }

    // Hover: the drawn point under the cursor.
    const cursor = svg("line", { y1: TL.t, y2: TL.t + ph, stroke: "#555", visibility: "hidden" }, root);
    const hit = svg("rect", { x: TL.l, y: TL.t, width: pw, height: ph, fill: "transparent" }, root);
    hit.addEventListener("mousemove", (ev) => {
      if (m === 0) return;
      const box = root.getBoundingClientRect();
      const sx = ((ev.clientX - box.left) / box.width) * TL.W;
      const j = floorIndex(T.x, ((sx - TL.l) / pw) * n);
      const s = T.x[j];
      cursor.setAttribute("x1", X(s + 0.5));
      cursor.setAttribute("x2", X(s + 0.5));
      cursor.setAttribute("visibility", "visible");
      let text = stepLabel(s);
      let total = 0;
      for (const c of CATS.slice().reverse()) {
        const v = catValue(c.key, j);
        total += v;
        text += "\n" + c.name + ": " + human(v);
      }
      text += "\ntotal: " + human(total) + " (" + exact(total) + ")";
      if (j + 1 < m && T.x[j + 1] > s + 1) {
        text += "\n(largest of steps " + s + "\u2013" + (T.x[j + 1] - 1) + " as drawn)";
      }
      showTip(ev, text);
    });
    hit.addEventListener("mouseleave", () => { cursor.setAttribute("visibility", "hidden"); hideTip(); });
  }

  function drawTimelineLegend() {
    const legend = document.getElementById("timeline-legend");
    const entries = CATS.map((c) => [c.key, c.name, "background:" + c.color, ""]);
    entries.push(["lb", "lower bound", "border-color:" + LB_COLOR, "dash"]);
    entries.push(["arena", "planned arena", "border-color:" + ARENA_COLOR, "line"]);
    if (T.m) entries.push(["m", "measured: " + T.mLabel, "border-color:" + MEASURED_COLOR, "line"]);
    for (const [key, name, style, cls] of entries) {
      const span = el("span", { title: "click to show or hide" }, legend);
      el("i", { style: style, class: cls }, span);
      span.appendChild(document.createTextNode(name));
      span.addEventListener("click", () => {
        shown[key] = !shown[key];
        span.classList.toggle("off", !shown[key]);
        drawTimeline();
      });
    }
    const note = document.getElementById("timeline-note");
    note.textContent = (T.x.length < T.n
      ? "Drawn from " + T.x.length.toLocaleString("en-US") + " of " + T.n.toLocaleString("en-US") +
        " steps: each point is the step with the most bytes (and the one with the most arena " +
        "bytes) of its run of steps, so every peak is exact. "
      : "") + "Click a legend entry to hide it (hiding weights zooms in on the arena).";
  }

  // ---- arena layout -----------------------------------------------------------------------
  const LY = { W: 1320, H: 430, l: 72, r: 18, t: 22, b: 30 };
  const SHADES = [["#4e79a7", "#6f98c6", "#3a6391"], ["#f28e2b", "#f7ab63"]];

  function drawLayout() {
    const canvas = document.getElementById("layout");
    const dpr = window.devicePixelRatio || 1;
    canvas.width = LY.W * dpr;
    canvas.height = LY.H * dpr;
    canvas.style.aspectRatio = LY.W + " / " + LY.H;
    const g = canvas.getContext("2d");
    g.scale(dpr, dpr);
    g.fillStyle = "#fff";
    g.fillRect(0, 0, LY.W, LY.H);
    const count = L.lo.length, n = Math.max(T.n, 1);
    const arena = Math.max(S.arena, 1);
    const pw = LY.W - LY.l - LY.r, ph = LY.H - LY.t - LY.b;
    const X = (s) => LY.l + (s / n) * pw;
    const Y = (o) => LY.t + ph - (o / arena) * ph;
    // Typed copies: the hover scan runs over them on every mouse move.
    const lo = Float64Array.from(L.lo), hi = Float64Array.from(L.hi);
    const off = Float64Array.from(L.off), size = new Float64Array(count);
    for (let i = 0; i < count; ++i) size[i] = Math.ceil(L.b[i] / 64) * 64;

    g.font = "11px system-ui, sans-serif";
    g.fillStyle = "#444";
    g.textAlign = "right";
    for (const v of byteTicks(arena)) {
      g.strokeStyle = "#eee";
      g.beginPath(); g.moveTo(LY.l, Y(v)); g.lineTo(LY.W - LY.r, Y(v)); g.stroke();
      g.fillText(human(v), LY.l - 6, Y(v) + 4);
    }
    g.textAlign = "center";
    for (const s of stepTicks(n)) if (s <= n) g.fillText(String(s), X(s), LY.t + ph + 16);
    g.textAlign = "right";
    g.fillText("step", LY.W - LY.r, LY.H - 4);

    // Batched by colour: one fillStyle change per shade, whatever the buffer count.
    const minW = 0.7, minH = 0.7;
    for (let kind = 0; kind < 2; ++kind) {
      for (let shade = 0; shade < SHADES[kind].length; ++shade) {
        g.fillStyle = SHADES[kind][shade];
        for (let i = 0; i < count; ++i) {
          if (L.k[i] !== kind || i % SHADES[kind].length !== shade) continue;
          const x0 = X(lo[i]), y0 = Y(off[i] + size[i]);
          g.fillRect(x0, y0, Math.max(X(hi[i]) - x0, minW), Math.max(Y(off[i]) - y0, minH));
        }
      }
    }
    // Outlines where a buffer is big enough to see one, so neighbours stay apart.
    g.strokeStyle = "rgba(255,255,255,.8)";
    g.lineWidth = 0.8;
    for (let i = 0; i < count; ++i) {
      const x0 = X(lo[i]), y0 = Y(off[i] + size[i]), w = X(hi[i]) - x0, h = Y(off[i]) - y0;
      if (w > 4 && h > 4) g.strokeRect(x0 + 0.4, y0 + 0.4, w - 0.8, h - 0.8);
    }
    g.fillStyle = ARENA_COLOR;
    g.fillText("planned arena " + human(S.arena), LY.W - LY.r, LY.t - 6);
    g.setLineDash([6, 4]);
    g.strokeStyle = LB_COLOR;
    g.lineWidth = 1.4;
    g.beginPath(); g.moveTo(LY.l, Y(S.lowerBoundArena)); g.lineTo(LY.W - LY.r, Y(S.lowerBoundArena)); g.stroke();
    g.setLineDash([2, 3]);
    g.strokeStyle = "#222";
    if (S.peakStep >= 0) {
      g.beginPath(); g.moveTo(X(S.peakStep + 0.5), LY.t); g.lineTo(X(S.peakStep + 0.5), LY.t + ph); g.stroke();
    }
    g.setLineDash([]);
    g.strokeStyle = "#999";
    g.strokeRect(LY.l, LY.t, pw, ph);

    canvas.addEventListener("mousemove", (ev) => {
      const box = canvas.getBoundingClientRect();
      const cx = ((ev.clientX - box.left) / box.width) * LY.W;
      const cy = ((ev.clientY - box.top) / box.height) * LY.H;
      const s = ((cx - LY.l) / pw) * n, o = ((LY.t + ph - cy) / ph) * arena;
      // Half a pixel of slack, as thin buffers are drawn at least that wide.
      const es = (0.5 / pw) * n, eo = (0.5 / ph) * arena;
      let found = -1;
      for (let i = 0; i < count; ++i) {
        if (s >= lo[i] - es && s < hi[i] + es && o >= off[i] - eo && o < off[i] + size[i] + eo) {
          found = i;
          if (s >= lo[i] && s < hi[i] && o >= off[i] && o < off[i] + size[i]) break;
        }
      }
      if (found < 0) { hideTip(); return; }
      const i = found;
      const name = L.k[i] === 1 ? "workspace of " + stepName(lo[i]) : L.t[i];
      showTip(ev, name + "\nproducer: " + stepLabel(lo[i]) + "\nbytes: " + exact(L.b[i]) +
        " (" + human(size[i]) + " in the arena)\noffset: " + exact(off[i]) +
        "\nlive: steps " + lo[i] + "\u2013" + (hi[i] - 1));
    });
    canvas.addEventListener("mouseleave", hideTip);

    const legend = document.getElementById("layout-legend");
    for (const [name, style, cls] of [["activation", "background:" + SHADES[0][0], ""],
                                      ["workspace", "background:" + SHADES[1][0], ""],
                                      ["lower bound (64-byte buffers)", "border-color:" + LB_COLOR, "dash"]]) {
      const span = el("span", { style: "cursor:default" }, legend);
      el("i", { style: style, class: cls }, span);
      span.appendChild(document.createTextNode(name));
    }
    let note = "Each buffer is a rectangle: x is its lifetime in steps, y its planned offset in the " +
      human(S.arena) + " arena (" + S.algorithm + "). Hover for its tensor, producer and bytes.";
    if (L.omitted > 0) {
      note += " The " + L.omitted.toLocaleString("en-US") + " smallest buffers (" + human(L.omittedBytes) +
        ") are not drawn.";
    }
    document.getElementById("layout-note").textContent = note;
  }

  // ---- tables -----------------------------------------------------------------------------
  function bytesCell(max, color) {
    return (td, value) => {
      td.textContent = human(value);
      td.title = exact(value);
      const w = max > 0 ? Math.max(1, Math.round((value / max) * 60)) : 0;
      el("span", { class: "bar", style: "width:" + w + "px;background:" + color }, td);
    };
  }

  function drawAlive() {
    const A = D.alive, rows = A.rows;
    const max = rows.reduce((m, r) => Math.max(m, r[2]), 0);
    const colors = { activations: "#4e79a7", workspace: "#f28e2b", outputs: "#59a14f",
                     inputs: "#edc948", weights: "#bab0ac" };
    const bar = bytesCell(max, "#4e79a7");
    table("alive", [
      { name: "tensor", value: (r) => r[0], cls: "name" },
      { name: "category", value: (r) => r[1],
        render: (td, r) => { el("span", { class: "bar", style: "width:10px;margin:0 5px 0 0;background:" + colors[r[1]] }, td); td.appendChild(document.createTextNode(r[1])); } },
      { name: "bytes", num: true, value: (r) => r[2], render: (td, r) => bar(td, r[2]) },
      { name: "producer", value: (r) => r[3], cls: "name" },
      { name: "last consumer", value: (r) => r[4], cls: "name" },
      { name: "why alive", value: (r) => r[5], cls: "name" },
    ], rows, 2);
    let note = S.peakStep >= 0
      ? (rows.length + A.omitted).toLocaleString("en-US") + " buffers are live at the peak, " +
        stepLabel(S.peakStep) + ", besides " + human(S.weights) + " of weights."
      : "No steps.";
    if (A.omitted > 0) note += " The " + A.omitted.toLocaleString("en-US") + " smallest (" + human(A.omittedBytes) + ") are not listed.";
    document.getElementById("alive-note").textContent = note;
  }

  function drawOps() {
    const max = D.ops.reduce((m, r) => Math.max(m, r[2]), 0);
    const bar = bytesCell(max, "#4e79a7");
    table("ops", [
      { name: "op", value: (r) => r[0] },
      { name: "nodes", num: true, value: (r) => r[1] },
      { name: "allocated", num: true, value: (r) => r[2], render: (td, r) => bar(td, r[2]) },
      { name: "largest step", num: true, value: (r) => r[3], text: (r) => human(r[3]) },
      { name: "largest workspace", num: true, value: (r) => r[4], text: (r) => human(r[4]) },
      { name: "alive at peak", num: true, value: (r) => r[5], text: (r) => human(r[5]) },
    ], D.ops, 2);
  }

  // ---- order comparison -------------------------------------------------------------------
  function drawOrders() {
    const O = D.orders;
    const note = document.getElementById("orders-note");
    const hide = (id) => { document.getElementById(id).style.display = "none"; };
    if (!O) {
      note.textContent = "A trace runs in the order it was recorded; there is no other order to compare.";
      ["orders-box", "moved-box", "orders-legend", "moved-note"].forEach(hide);
      return;
    }
    if (!O.differ) {
      note.textContent = "The memory-aware search (" + O.method + ") found no order with a lower bound " +
        "below the stored order's " + human(O.storedLowerBound) + ", so the two orders are the same.";
      ["orders-box", "moved-box", "orders-legend", "moved-note"].forEach(hide);
      return;
    }
    const change = O.storedLowerBound > 0 ? (O.memoryLowerBound / O.storedLowerBound - 1) * 100 : 0;
    note.textContent = "Lower bound " + human(O.storedLowerBound) + " in the stored order, " +
      human(O.memoryLowerBound) + " in the memory-aware order (" + (change >= 0 ? "+" : "") +
      change.toFixed(1) + "%, " + O.method + (O.exact && O.method !== "exact" ? ", exhaustive" : "") + "); total peak " +
      human(O.storedPeak) + " vs " + human(O.memoryPeak) + ". Bytes live in the arena per step:";
    const legend = document.getElementById("orders-legend");
    for (const [name, color] of [["stored order", "#888"], ["memory-aware order", ARENA_COLOR]]) {
      const span = el("span", { style: "cursor:default" }, legend);
      el("i", { class: "line", style: "border-color:" + color }, span);
      span.appendChild(document.createTextNode(name));
    }
    const root = document.getElementById("orders");
    const W = 1320, H = 240, l = 72, r = 18, t = 12, b = 30;
    const pw = W - l - r, ph = H - t - b, n = Math.max(S.steps, 1), m = O.x.length;
    let ymax = 1;
    for (let j = 0; j < m; ++j) ymax = Math.max(ymax, O.stored[j], O.memory[j]);
    ymax *= 1.06;
    const X = (s) => l + (s / n) * pw, Y = (v) => t + ph - (v / ymax) * ph;
    for (const v of byteTicks(ymax)) {
      svg("line", { x1: l, x2: W - r, y1: Y(v), y2: Y(v), stroke: "#eee" }, root);
      svg("text", { x: l - 6, y: Y(v) + 4, "text-anchor": "end" }, root, human(v));
    }
    for (const s of stepTicks(n)) {
      if (s <= n) svg("text", { x: X(s), y: t + ph + 16, "text-anchor": "middle" }, root, String(s));
    }
    for (const [key, color] of [["stored", "#888"], ["memory", ARENA_COLOR]]) {
      const pts = [];
      for (let j = 0; j < m; ++j) {
        const x1 = X(j + 1 < m ? O.x[j + 1] : O.x[j] + 1);
        pts.push(X(O.x[j]).toFixed(1) + "," + Y(O[key][j]).toFixed(1), x1.toFixed(1) + "," + Y(O[key][j]).toFixed(1));
      }
      if (pts.length) svg("path", { d: "M" + pts.join("L"), fill: "none", stroke: color, "stroke-width": 1.5 }, root);
    }
    document.getElementById("moved-note").textContent = O.movedCount.toLocaleString("en-US") + " of " +
      S.steps.toLocaleString("en-US") + " nodes run at another step in the memory-aware order" +
      (O.moved.length < O.movedCount ? "; the " + O.moved.length + " that move farthest:" : ":");
    table("moved", [
      { name: "node", value: (r) => r[0], cls: "name" },
      { name: "stored step", num: true, value: (r) => r[1] },
      { name: "memory-aware step", num: true, value: (r) => r[2] },
      { name: "moved by", num: true, value: (r) => Math.abs(r[2] - r[1]), text: (r) => (r[2] > r[1] ? "+" : "") + (r[2] - r[1]) },
    ], O.moved, 3);
  }

  drawHeader();
  drawTimelineLegend();
  drawTimeline();
  drawLayout();
  drawAlive();
  drawOps();
  drawOrders();
  // Ready: force style and layout, then record the time since navigation started.
  void document.body.offsetHeight;
  document.documentElement.setAttribute("data-render-ms", performance.now().toFixed(1));
})();
