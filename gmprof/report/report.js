// gmprof's HTML report: heat maps drawn on a canvas, click-to-zoom, sortable tables.
// Plain JavaScript inlined into the page (gmprof/report/html.py): nothing is fetched, so the
// page works offline. Each heat map's data is a JSON block that heatgrid.drawn_grid wrote:
// its cells (run-length coded where that is shorter), one per element up to heatgrid.MAX_DRAWN cells (binned above).
(function () {
  "use strict";
  // matplotlib's viridis at 0, 0.1, ..., 1 (as heatsvg.VIRIDIS); 0 (never accessed) is grey
  var VIRIDIS = ["#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c", "#22a884",
                 "#44bf70", "#7ad151", "#bddf26", "#fde725"];
  var ZERO = [217, 217, 217];
  var PLOT_W = 640, PLOT_H = 400, MAX_CELL = 24, MIN_SIDE = 12;
  var LEFT = 44, TOP = 6, BOTTOM = 22, RIGHT = 10;
  var STOPS = VIRIDIS.map(function (c) {
    return [1, 3, 5].map(function (i) { return parseInt(c.substr(i, 2), 16); });
  });

  function colour(v, lo, hi) {
    if (v === 0) return ZERO;
    var t = hi <= lo ? 0 : Math.min(1, Math.max(0, (v - lo) / (hi - lo)));
    var x = t * (STOPS.length - 1), i = Math.min(Math.floor(x), STOPS.length - 2), f = x - i;
    return [0, 1, 2].map(function (k) {
      return Math.round(STOPS[i][k] + (STOPS[i + 1][k] - STOPS[i][k]) * f);
    });
  }

  // a field of cells: {"values": [...]} or {"runs": [value, run, ...]} (heatgrid._rle)
  function unrle(cells, n) {
    if (!cells) return null;
    if (cells.values) return Float64Array.from(cells.values);
    var runs = cells.runs, out = new Float64Array(n), at = 0;
    for (var i = 0; i < runs.length; i += 2) {
      out.fill(runs[i], at, at + runs[i + 1]);
      at += runs[i + 1];
    }
    return out;
  }

  function fmt(v, thr) {
    if (v === null || v === undefined || isNaN(v)) return "-";
    if (thr !== null && thr !== undefined && v >= thr) return ">=" + thr;
    if (!Number.isInteger(v)) {
      return v.toLocaleString("en-US", {minimumFractionDigits: 2, maximumFractionDigits: 2});
    }
    return v.toLocaleString("en-US");
  }

  // integer ticks 0, step, 2 step, ... (step 1, 2 or 5 x 10^k) inside [a, b), ~one per 60 px
  function ticks(a, b, px) {
    var want = Math.max(1, Math.floor(px / 60)), n = b - a;
    for (var k = 0; k < 12; k++) {
      for (var m of [1, 2, 5]) {
        var step = m * Math.pow(10, k);
        if (Math.ceil(n / step) <= want + 1) {
          var out = [];
          for (var t = Math.ceil(a / step) * step; t < b; t += step) out.push(t);
          return out;
        }
      }
    }
    return [a];
  }

  // name[i][j] of elements, the leading dimensions of a 3-D (or more) array unflattened
  function indexText(m, e0, e1, f0, f1) {
    var cj = f0 === f1 ? "" + f0 : f0 + ".." + f1;
    if (m.one_d) return m.name + "[" + cj + "]";
    var dec = m.declared;
    if (dec.length > 2 && e0 === e1) {
      var lead = [], rest = e0;
      for (var d = dec.length - 2; d >= 0; d--) { lead.unshift(rest % dec[d]); rest = Math.floor(rest / dec[d]); }
      return m.name + lead.map(function (i) { return "[" + i + "]"; }).join("") + "[" + cj + "]";
    }
    var ri = e0 === e1 ? "" + e0 : e0 + ".." + e1;
    return m.name + "[" + ri + "][" + cj + "]";
  }

  function HeatMap(box) {
    var data = JSON.parse(document.getElementById(box.dataset.src).textContent);
    this.box = box;
    this.d = data;
    this.name = box.dataset.name;
    this.one_d = data.one_d;
    this.declared = data.declared;
    var n = data.rows * data.cols;
    this.mean = unrle(data.mean, n);
    this.min = unrle(data.min, n);
    this.max = unrle(data.max, n);
    this.lo = data.lo > 0 ? data.lo : 1;  // the colour scale starts at the least non-zero
    this.canvas = box.querySelector("canvas");
    this.status = box.querySelector(".heat-view");
    this.tip = box.querySelector(".heat-tip");
    this.full = {r0: 0, r1: data.rows, c0: 0, c1: data.cols};
    this.view = this.full;
    var self = this;
    box.querySelector(".heat-reset").addEventListener("click", function () { self.show(self.full); });
    box.querySelector(".heat-out").addEventListener("click", function () { self.zoomOut(); });
    this.canvas.addEventListener("mousemove", function (ev) { self.hover(ev); });
    this.canvas.addEventListener("mouseleave", function () { self.tip.textContent = "\u00a0"; });
    this.canvas.addEventListener("mousedown", function (ev) { self.press = self.cellAt(ev); });
    this.canvas.addEventListener("mouseup", function (ev) { self.release(ev); });
    this.show(this.full);
  }

  HeatMap.prototype.show = function (v) {
    this.view = v;
    this.draw();
    var d = this.d, by = d.block[0], bx = d.block[1];
    var what = this.one_d
      ? "elements " + v.c0 * bx + ".." + (Math.min(v.c1 * bx, d.elements[1]) - 1) + " of " +
        d.elements[1].toLocaleString("en-US")
      : "rows " + v.r0 * by + ".." + (Math.min(v.r1 * by, d.elements[0]) - 1) + ", columns " +
        v.c0 * bx + ".." + (Math.min(v.c1 * bx, d.elements[1]) - 1) + " of " +
        d.elements[0].toLocaleString("en-US") + " x " + d.elements[1].toLocaleString("en-US");
    var zoomed = v !== this.full && (v.r0 || v.c0 || v.r1 < d.rows || v.c1 < d.cols);
    this.status.textContent = (zoomed ? "zoomed: " : "") + what;
    this.box.dataset.zoomed = zoomed ? "yes" : "no";
  };

  HeatMap.prototype.draw = function () {
    var v = this.view, vc = v.c1 - v.c0, vr = v.r1 - v.r0, d = this.d;
    var s = Math.min(PLOT_W / vc, this.one_d ? MAX_CELL : PLOT_H / vr, MAX_CELL);
    var sx = s, sy = this.one_d ? MAX_CELL : s;
    if (vc * sx < MIN_SIDE) sx = MIN_SIDE / vc;
    if (vr * sy < MIN_SIDE) sy = MIN_SIDE / vr;
    var pw = Math.max(1, Math.round(vc * sx)), ph = Math.max(1, Math.round(vr * sy));
    var c = this.canvas;
    c.width = LEFT + pw + RIGHT;
    c.height = TOP + ph + BOTTOM;
    var ctx = c.getContext("2d");
    ctx.clearRect(0, 0, c.width, c.height);
    // each pixel: the largest count of the cells it covers (zoomed out, a lone hot element
    // stays visible); zoomed in, one cell covers many pixels
    var img = ctx.createImageData(pw, ph), px = img.data;
    var cx0 = new Int32Array(pw), cx1 = new Int32Array(pw);
    for (var x = 0; x < pw; x++) {
      cx0[x] = v.c0 + Math.floor(x * vc / pw);
      cx1[x] = Math.max(cx0[x] + 1, v.c0 + Math.floor((x + 1) * vc / pw));
    }
    var lut = {};
    for (var y = 0; y < ph; y++) {
      var r0 = v.r0 + Math.floor(y * vr / ph), r1 = Math.max(r0 + 1, v.r0 + Math.floor((y + 1) * vr / ph));
      for (x = 0; x < pw; x++) {
        var best = -1;
        for (var r = r0; r < r1; r++) {
          var base = r * d.cols;
          for (var cc = cx0[x]; cc < cx1[x]; cc++) {
            var val = this.mean[base + cc];
            if (val > best) best = val;
          }
        }
        var rgb = lut[best] || (lut[best] = colour(best, this.lo, d.hi));
        var at = 4 * (y * pw + x);
        px[at] = rgb[0]; px[at + 1] = rgb[1]; px[at + 2] = rgb[2]; px[at + 3] = 255;
      }
    }
    ctx.putImageData(img, LEFT, TOP);
    ctx.strokeStyle = "#888";
    ctx.lineWidth = 0.5;
    ctx.strokeRect(LEFT, TOP, pw, ph);
    ctx.fillStyle = "#333";
    ctx.strokeStyle = "#444";
    ctx.lineWidth = 1;
    ctx.font = "10px sans-serif";
    var by = d.block[0], bx = d.block[1];
    var fx = pw / vc, fy = ph / vr;
    ctx.textAlign = "center";
    ticks(v.c0 * bx, v.c1 * bx, pw).forEach(function (t) {
      var xx = LEFT + (t / bx - v.c0 + 0.5 / bx) * fx;
      ctx.beginPath(); ctx.moveTo(xx, TOP + ph); ctx.lineTo(xx, TOP + ph + 4); ctx.stroke();
      ctx.fillText("" + t, xx, TOP + ph + 15);
    });
    if (!this.one_d) {
      ctx.textAlign = "end";
      ticks(v.r0 * by, v.r1 * by, ph).forEach(function (t) {
        var yy = TOP + (t / by - v.r0 + 0.5 / by) * fy;
        ctx.beginPath(); ctx.moveTo(LEFT - 4, yy); ctx.lineTo(LEFT, yy); ctx.stroke();
        ctx.fillText("" + t, LEFT - 6, yy + 3.5);
      });
    }
    this.geom = {pw: pw, ph: ph, fx: fx, fy: fy};
  };

  // the drawn cell under the pointer, null outside the plot
  HeatMap.prototype.cellAt = function (ev) {
    var rect = this.canvas.getBoundingClientRect(), g = this.geom, v = this.view;
    var x = (ev.clientX - rect.left) * this.canvas.width / rect.width - LEFT;
    var y = (ev.clientY - rect.top) * this.canvas.height / rect.height - TOP;
    if (x < 0 || y < 0 || x >= g.pw || y >= g.ph) return null;
    return {r: Math.min(v.r1 - 1, v.r0 + Math.floor(y / g.fy)),
            c: Math.min(v.c1 - 1, v.c0 + Math.floor(x / g.fx))};
  };

  HeatMap.prototype.hover = function (ev) {
    var cell = this.cellAt(ev);
    if (!cell) { this.tip.textContent = "\u00a0"; return; }
    var d = this.d, by = d.block[0], bx = d.block[1], thr = d.threshold;
    var e0 = cell.r * by, e1 = Math.min((cell.r + 1) * by, d.elements[0]) - 1;
    var f0 = cell.c * bx, f1 = Math.min((cell.c + 1) * bx, d.elements[1]) - 1;
    var i = cell.r * d.cols + cell.c, where = indexText(this, e0, e1, f0, f1);
    this.tip.textContent = this.min
      ? where + ": mean " + fmt(this.mean[i]) + ", min " + fmt(this.min[i], thr) + ", max " + fmt(this.max[i], thr)
      : where + ": " + fmt(this.mean[i], thr);
  };

  // a click zooms in 4 times around the cell; a drag zooms to the rectangle it spans
  HeatMap.prototype.release = function (ev) {
    var a = this.press, b = this.cellAt(ev), v = this.view;
    this.press = null;
    if (!a || !b) return;
    var nv;
    if (a.r !== b.r || a.c !== b.c) {
      nv = {r0: Math.min(a.r, b.r), r1: Math.max(a.r, b.r) + 1,
            c0: Math.min(a.c, b.c), c1: Math.max(a.c, b.c) + 1};
    } else {
      var h = this.one_d ? 1 : Math.max(1, Math.ceil((v.r1 - v.r0) / 4));
      var w = Math.max(1, Math.ceil((v.c1 - v.c0) / 4));
      if (h === v.r1 - v.r0 && w === v.c1 - v.c0) return;  // one cell: nothing closer to show
      var r0 = Math.max(v.r0, Math.min(v.r1 - h, b.r - Math.floor(h / 2)));
      var c0 = Math.max(v.c0, Math.min(v.c1 - w, b.c - Math.floor(w / 2)));
      nv = {r0: r0, r1: r0 + h, c0: c0, c1: c0 + w};
    }
    if (this.one_d) { nv.r0 = 0; nv.r1 = 1; }
    this.show(nv);
  };

  HeatMap.prototype.zoomOut = function () {
    var v = this.view, d = this.d;
    var h = Math.min(d.rows, (v.r1 - v.r0) * 4), w = Math.min(d.cols, (v.c1 - v.c0) * 4);
    var r0 = Math.max(0, Math.min(d.rows - h, v.r0 - Math.floor((h - (v.r1 - v.r0)) / 2)));
    var c0 = Math.max(0, Math.min(d.cols - w, v.c0 - Math.floor((w - (v.c1 - v.c0)) / 2)));
    this.show(h === d.rows && w === d.cols ? this.full : {r0: r0, r1: r0 + h, c0: c0, c1: c0 + w});
  };

  // tables: a click on a column's header sorts by it (again: the other way)
  function sortKey(td) {
    var s = (td.dataset.sort !== undefined ? td.dataset.sort : td.textContent).trim();
    var n = s.replace(/^>=/, "").replace(/,/g, "");
    if (s === "-" || s === "" || s === "n/a") return {num: true, v: -Infinity};
    if (/^-?\d+(\.\d+)?$/.test(n)) return {num: true, v: parseFloat(n)};
    return {num: false, v: s.toLowerCase()};
  }

  function sortable(table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.tabIndex = 0;
      th.title = "sort by " + th.textContent;
      function sort() {
        var down = th.getAttribute("aria-sort") === "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", down ? "descending" : "ascending");
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var keys = rows.map(function (r) { return sortKey(r.cells[col]); });
        var numeric = keys.every(function (k) { return k.num; });
        var order = rows.map(function (r, i) { return i; });
        order.sort(function (i, j) {
          var a = keys[i].v, b = keys[j].v, c;
          if (numeric) c = a < b ? -1 : a > b ? 1 : 0;
          else c = String(a).localeCompare(String(b), "en", {numeric: true});
          return (down ? -c : c) || i - j;
        });
        order.forEach(function (i) { body.appendChild(rows[i]); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (ev) { if (ev.key === "Enter") sort(); });
    });
  }

  document.querySelectorAll("table.sortable").forEach(sortable);
  document.querySelectorAll(".heatmap[data-src]").forEach(function (box) { new HeatMap(box); });
  document.documentElement.dataset.ready = "yes";
})();
