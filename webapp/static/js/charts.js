/*
 * MicroCharts: a small SVG line-chart library for live training metrics (no dependencies).
 *
 *   const chart = new MicroCharts.LineChart(element, {
 *     title: "Reward", series: [{key: "reward", label: "reward"}], height: 180,
 *   });
 *   chart.setSeries("reward", steps, values);   // replace a series (values may hold null = gap)
 *   chart.append("reward", 1234, 0.42);         // live append; the same step again replaces its value
 *
 * Contracts:
 * - Steps of a series are kept sorted and unique; append() of an existing step replaces the value,
 *   so replayed websocket events never draw a point twice.
 * - Rendering downsamples every series to the plot's pixel width (M4: first, min, max and last point
 *   of each pixel column), so 100,000 points draw as at most 4 x width vertices and look identical.
 * - Renders are coalesced with requestAnimationFrame; many appends per frame cost one render.
 * - Each series' <path> carries data-series (its key) and data-points (vertices drawn) for tests.
 */
(function (global) {
  "use strict";

  var SVG_NS = "http://www.w3.org/2000/svg";
  var PALETTE = ["#3451b2", "#d9480f", "#2b8a3e", "#ae3ec9", "#1098ad", "#e8590c", "#5c940d", "#c2255c"];
  var MARGIN = { top: 8, right: 12, bottom: 22, left: 52 };

  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG_NS, name);
    for (var k in attrs) {
      if (Object.prototype.hasOwnProperty.call(attrs, k)) node.setAttribute(k, attrs[k]);
    }
    if (parent) parent.appendChild(node);
    return node;
  }

  /* Index of the first element of sorted `arr` that is >= x (arr.length when none). */
  function lowerBound(arr, x) {
    var lo = 0, hi = arr.length;
    while (lo < hi) {
      var mid = (lo + hi) >>> 1;
      if (arr[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  /*
   * M4 downsampling to `columns` pixel columns over the x range [x0, x1].
   * Returns the indices (ascending) of the points to draw: per column the first, min, max and last
   * finite point. Null/NaN values are kept as gap markers (their index is returned so the line breaks).
   */
  function m4(xs, ys, x0, x1, columns) {
    var n = xs.length;
    if (n <= 4 * columns) {
      var all = new Array(n);
      for (var a = 0; a < n; a++) all[a] = a;
      return all;
    }
    var span = x1 - x0 || 1;
    var out = [];
    var col = -1, first = -1, last = -1, iMin = -1, iMax = -1;
    function flush() {
      if (first < 0) return;
      var pick = [first, iMin, iMax, last].sort(function (p, q) { return p - q; });
      for (var j = 0; j < 4; j++) {
        if (out.length === 0 || out[out.length - 1] !== pick[j]) out.push(pick[j]);
      }
    }
    for (var i = 0; i < n; i++) {
      var y = ys[i];
      if (y === null || y !== y) {  // gap: close the column and keep the break
        flush();
        first = last = iMin = iMax = -1;
        col = -1;
        out.push(i);
        continue;
      }
      var c = Math.floor(((xs[i] - x0) / span) * (columns - 1));
      if (c !== col) {
        flush();
        col = c; first = last = iMin = iMax = i;
      } else {
        last = i;
        if (y < ys[iMin]) iMin = i;
        if (y > ys[iMax]) iMax = i;
      }
    }
    flush();
    return out;
  }

  /* About `count` round tick values covering [lo, hi]. */
  function niceTicks(lo, hi, count) {
    // A range of a few float rounding steps (an EMA of a constant) is flat: one tick, never a loop
    // over 1e16 candidates.
    if (!(hi > lo) || hi - lo <= Math.max(Math.abs(lo), Math.abs(hi)) * 1e-9) return [lo];
    var raw = (hi - lo) / Math.max(1, count);
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var norm = raw / mag;
    var step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
    var ticks = [];
    var first = Math.ceil(lo / step);
    for (var k = first; k * step <= hi + step * 1e-9 && ticks.length <= 4 * count + 2; k++) {
      var t = k * step;
      ticks.push(Math.abs(t) < step * 1e-9 ? 0 : Number(t.toPrecision(12)));
    }
    return ticks;
  }

  function formatNumber(v) {
    if (v === null || v === undefined || v !== v) return "–";
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
    if (a >= 100) return v.toFixed(0);
    if (a >= 10) return String(Number(v.toFixed(1)));
    return String(Number(v.toPrecision(3)));
  }

  function LineChart(container, options) {
    options = options || {};
    this.container = container;
    this.height = options.height || 180;
    this.format = options.format || formatNumber;
    this.series = [];
    this.byKey = {};
    this._frame = null;
    container.classList.add("microchart");
    if (options.title) {
      var h = document.createElement("h3");
      h.textContent = options.title;
      container.appendChild(h);
    }
    this.legend = document.createElement("div");
    this.legend.className = "microchart-legend";
    container.appendChild(this.legend);
    this.svg = el("svg", { class: "microchart-svg", height: this.height, role: "img" }, container);
    if (options.title) el("title", {}, this.svg).textContent = options.title;
    this.gridLayer = el("g", { class: "grid" }, this.svg);
    this.lineLayer = el("g", { class: "lines" }, this.svg);
    this.hoverLine = el("line", { class: "hover", visibility: "hidden" }, this.svg);
    this.tooltip = document.createElement("div");
    this.tooltip.className = "microchart-tooltip";
    this.tooltip.hidden = true;
    container.appendChild(this.tooltip);
    var self = this;
    (options.series || []).forEach(function (s) { self.addSeries(s); });
    this.svg.addEventListener("mousemove", function (ev) { self._hover(ev); });
    this.svg.addEventListener("mouseleave", function () {
      self.hoverLine.setAttribute("visibility", "hidden");
      self.tooltip.hidden = true;
    });
    if (global.ResizeObserver) {
      this._resize = new ResizeObserver(function () { self.scheduleRender(); });
      this._resize.observe(container);
    }
    this.scheduleRender();
  }

  LineChart.prototype.addSeries = function (spec) {
    if (this.byKey[spec.key]) return this.byKey[spec.key];
    var color = spec.color || PALETTE[this.series.length % PALETTE.length];
    var s = { key: spec.key, label: spec.label || spec.key, color: color, xs: [], ys: [], drawn: 0 };
    s.path = el("path", { class: "line", stroke: color, fill: "none", "data-series": spec.key, "data-points": 0 },
      this.lineLayer);
    var item = document.createElement("span");
    item.className = "microchart-key";
    var swatch = document.createElement("i");
    swatch.style.background = color;
    item.appendChild(swatch);
    item.appendChild(document.createTextNode(s.label + " "));
    s.valueNode = document.createElement("b");
    item.appendChild(s.valueNode);
    this.legend.appendChild(item);
    this.series.push(s);
    this.byKey[spec.key] = s;
    return s;
  };

  /* Replace a series' data; steps ascending (sorted here when not). */
  LineChart.prototype.setSeries = function (key, steps, values) {
    var s = this.byKey[key] || this.addSeries({ key: key });
    var idx = steps.map(function (_, i) { return i; });
    idx.sort(function (a, b) { return steps[a] - steps[b]; });
    s.xs = []; s.ys = [];
    for (var i = 0; i < idx.length; i++) {
      var x = steps[idx[i]], y = values[idx[i]];
      if (s.xs.length && s.xs[s.xs.length - 1] === x) { s.ys[s.ys.length - 1] = y; continue; }
      s.xs.push(x); s.ys.push(y === undefined ? null : y);
    }
    this.scheduleRender();
  };

  /* Add or replace the point at `step`. */
  LineChart.prototype.append = function (key, step, value) {
    var s = this.byKey[key] || this.addSeries({ key: key });
    var v = value === undefined ? null : value;
    var n = s.xs.length;
    if (n === 0 || step > s.xs[n - 1]) {
      s.xs.push(step); s.ys.push(v);
    } else {
      var i = lowerBound(s.xs, step);
      if (s.xs[i] === step) s.ys[i] = v; else { s.xs.splice(i, 0, step); s.ys.splice(i, 0, v); }
    }
    this.scheduleRender();
  };

  LineChart.prototype.clear = function () {
    this.series.forEach(function (s) { s.xs = []; s.ys = []; });
    this.scheduleRender();
  };

  LineChart.prototype.pointCount = function (key) {
    var s = this.byKey[key];
    return s ? s.xs.length : 0;
  };

  LineChart.prototype.scheduleRender = function () {
    if (this._frame !== null) return;
    var self = this;
    var raf = global.requestAnimationFrame || function (f) { return setTimeout(f, 16); };
    this._frame = raf(function () { self._frame = null; self.render(); });
  };

  LineChart.prototype._domain = function () {
    var x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    this.series.forEach(function (s) {
      if (!s.xs.length) return;
      x0 = Math.min(x0, s.xs[0]);
      x1 = Math.max(x1, s.xs[s.xs.length - 1]);
      for (var i = 0; i < s.ys.length; i++) {
        var y = s.ys[i];
        if (y === null || y !== y) continue;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
    });
    if (x0 === Infinity) return null;
    if (x1 === x0) { x0 -= 1; x1 += 1; }
    if (y0 === Infinity) { y0 = 0; y1 = 1; }
    if (y1 === y0) { var pad = Math.abs(y0) * 0.1 || 0.5; y0 -= pad; y1 += pad; }
    var m = (y1 - y0) * 0.05;
    return { x0: x0, x1: x1, y0: y0 - m, y1: y1 + m };
  };

  LineChart.prototype.render = function () {
    var width = Math.max(120, Math.floor(this.container.clientWidth || 360) - 2);
    var height = this.height;
    this.svg.setAttribute("width", width);
    this.svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    var pw = width - MARGIN.left - MARGIN.right, ph = height - MARGIN.top - MARGIN.bottom;
    while (this.gridLayer.firstChild) this.gridLayer.removeChild(this.gridLayer.firstChild);
    var d = this._domain();
    this._view = null;
    if (!d) {
      el("text", { x: MARGIN.left + pw / 2, y: MARGIN.top + ph / 2, "text-anchor": "middle", class: "empty" },
        this.gridLayer).textContent = "no data yet";
      this.series.forEach(function (s) { s.path.setAttribute("d", ""); s.path.setAttribute("data-points", 0); });
      return;
    }
    var sx = function (x) { return MARGIN.left + ((x - d.x0) / (d.x1 - d.x0)) * pw; };
    var sy = function (y) { return MARGIN.top + (1 - (y - d.y0) / (d.y1 - d.y0)) * ph; };
    this._view = { d: d, sx: sx, pw: pw };
    var self = this;
    niceTicks(d.y0, d.y1, 4).forEach(function (t) {
      var y = sy(t).toFixed(1);
      el("line", { x1: MARGIN.left, x2: MARGIN.left + pw, y1: y, y2: y, class: "gridline" }, self.gridLayer);
      el("text", { x: MARGIN.left - 6, y: y, dy: "0.32em", "text-anchor": "end", class: "tick" },
        self.gridLayer).textContent = self.format(t);
    });
    niceTicks(d.x0, d.x1, Math.max(2, Math.floor(pw / 80))).forEach(function (t) {
      if (t !== Math.round(t)) return;  // steps are integers
      var x = sx(t).toFixed(1);
      el("line", { x1: x, x2: x, y1: MARGIN.top + ph, y2: MARGIN.top + ph + 4, class: "axis" }, self.gridLayer);
      el("text", { x: x, y: height - 6, "text-anchor": "middle", class: "tick" }, self.gridLayer).textContent =
        String(t);
    });
    el("rect", { x: MARGIN.left, y: MARGIN.top, width: pw, height: ph, class: "frame", fill: "none" },
      this.gridLayer);
    this.series.forEach(function (s) {
      var idx = m4(s.xs, s.ys, d.x0, d.x1, Math.max(1, Math.floor(pw)));
      var parts = [], pen = false, drawn = 0;
      for (var j = 0; j < idx.length; j++) {
        var i = idx[j], y = s.ys[i];
        if (y === null || y !== y) { pen = false; continue; }
        parts.push((pen ? "L" : "M") + sx(s.xs[i]).toFixed(1) + "," + sy(y).toFixed(1));
        pen = true;
        drawn++;
      }
      if (drawn === 1) parts.push("h0.01");  // a single point still shows (round line caps)
      s.path.setAttribute("d", parts.join(""));
      s.path.setAttribute("data-points", drawn);
      s.drawn = drawn;
      var lastY = s.ys.length ? s.ys[s.ys.length - 1] : null;
      s.valueNode.textContent = self.format(lastY);
    });
  };

  LineChart.prototype._hover = function (ev) {
    var v = this._view;
    if (!v) return;
    var rect = this.svg.getBoundingClientRect();
    var px = ev.clientX - rect.left;
    if (px < MARGIN.left || px > MARGIN.left + v.pw) return;
    var step = Math.round(v.d.x0 + ((px - MARGIN.left) / v.pw) * (v.d.x1 - v.d.x0));
    var lines = ["step " + step];
    var self = this;
    this.series.forEach(function (s) {
      if (!s.xs.length) return;
      var i = Math.min(lowerBound(s.xs, step), s.xs.length - 1);
      if (i > 0 && Math.abs(s.xs[i - 1] - step) < Math.abs(s.xs[i] - step)) i -= 1;
      lines.push(s.label + ": " + self.format(s.ys[i]) + " @" + s.xs[i]);
    });
    var x = v.sx(step).toFixed(1);
    this.hoverLine.setAttribute("x1", x);
    this.hoverLine.setAttribute("x2", x);
    this.hoverLine.setAttribute("y1", MARGIN.top);
    this.hoverLine.setAttribute("y2", this.height - MARGIN.bottom);
    this.hoverLine.setAttribute("visibility", "visible");
    this.tooltip.textContent = lines.join("\n");
    this.tooltip.style.left = Math.min(px + 12, rect.width - 160) + "px";
    this.tooltip.hidden = false;
  };

  global.MicroCharts = { LineChart: LineChart, m4: m4, niceTicks: niceTicks, formatNumber: formatNumber };
})(window);
