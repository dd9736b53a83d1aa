/*
 * MicroOverlay: an overlay line chart for many runs (the comparison page; webapp/static/js/compare.js).
 * Needs charts.js (MicroCharts.LineChart, which it extends).
 *
 *   var chart = new MicroOverlay.OverlayChart(element, { title: "Reward", smoothing: 0.6 });
 *   chart.setBuckets("run-7", {key: "run-7", label: "#7 ...", color: "..."}, {steps, mean, min, max, count});
 *   chart.appendPoint("run-7", spec, step, value);   // a live point: a new one-point bucket
 *   chart.setSmoothing(0.9); chart.setHidden("run-7", true); chart.showBand = false;
 *
 * Per series it draws the EMA of the bucket means (a bucket of c points decays the past by
 * smoothing^c: the average its raw points would give; mirrors training.services.series.ema) and the
 * buckets' min/max band, so a one-step spike stays visible however many steps share a pixel.
 */
(function (global) {
  "use strict";

  var LineChart = global.MicroCharts.LineChart;

  /* Debiased EMA over buckets: values[i] averaged with weight (1 - s^count[i]). */
  function emaBuckets(values, counts, smoothing) {
    var out = new Array(values.length), acc = 0, weight = 0;
    for (var i = 0; i < values.length; i++) {
      var v = values[i];
      if (v === null || v !== v) { out[i] = null; continue; }
      var decay = Math.pow(smoothing, counts[i] || 1);
      acc = acc * decay + (1 - decay) * v;
      weight = weight * decay + (1 - decay);
      out[i] = weight > 0 ? acc / weight : v;
    }
    return out;
  }

  // --- OverlayChart: LineChart + per-run buckets, EMA and a min/max band --------------------------
  function OverlayChart(container, options) {
    LineChart.call(this, container, options);
    this.bandLayer = document.createElementNS("http://www.w3.org/2000/svg", "g");
    this.bandLayer.setAttribute("class", "bands");
    this.svg.insertBefore(this.bandLayer, this.lineLayer);
    this.buckets = {};  // key -> {steps, mean, min, max, count}
    this.smoothing = options.smoothing || 0;
    this.showBand = options.showBand !== false;
  }
  OverlayChart.prototype = Object.create(LineChart.prototype);
  OverlayChart.prototype.constructor = OverlayChart;

  OverlayChart.prototype.setBuckets = function (key, spec, data) {
    this.addSeries(spec);
    this.buckets[key] = { steps: data.steps.slice(), mean: data.mean.slice(), min: data.min.slice(),
      max: data.max.slice(), count: data.count.slice() };
    this._refresh(key);
  };

  /* A live point: a new last bucket, or the replacement of a one-point bucket at the same step. */
  OverlayChart.prototype.appendPoint = function (key, spec, step, value) {
    if (value === null || value === undefined || value !== value) return;
    this.addSeries(spec);
    var b = this.buckets[key] || (this.buckets[key] = { steps: [], mean: [], min: [], max: [], count: [] });
    var n = b.steps.length;
    if (n && step < b.steps[n - 1]) return;  // inside a bucket the server already aggregated
    if (n && step === b.steps[n - 1]) {
      if (b.count[n - 1] !== 1) return;
      b.mean[n - 1] = b.min[n - 1] = b.max[n - 1] = value;
    } else {
      b.steps.push(step); b.mean.push(value); b.min.push(value); b.max.push(value); b.count.push(1);
    }
    this._refresh(key);
  };

  OverlayChart.prototype._refresh = function (key) {
    var b = this.buckets[key];
    LineChart.prototype.setSeries.call(this, key, b.steps, emaBuckets(b.mean, b.count, this.smoothing));
  };

  OverlayChart.prototype.setSmoothing = function (s) {
    this.smoothing = s;
    for (var key in this.buckets) if (Object.prototype.hasOwnProperty.call(this.buckets, key)) this._refresh(key);
  };

  OverlayChart.prototype.setHidden = function (key, hidden) {
    var s = this.byKey[key];
    if (!s) return;
    s.hidden = hidden;
    s.path.style.display = hidden ? "none" : "";
    this.scheduleRender();
  };

  OverlayChart.prototype._visible = function () {
    return this.series.filter(function (s) { return !s.hidden; });
  };

  OverlayChart.prototype._domain = function () {
    var all = this.series, self = this;
    this.series = this._visible();
    var d = LineChart.prototype._domain.call(this);
    this.series = all;
    if (!d || !this.showBand) return d;
    var y0 = d.y0, y1 = d.y1;
    this._visible().forEach(function (s) {
      var b = self.buckets[s.key];
      if (!b) return;
      for (var i = 0; i < b.min.length; i++) {
        if (b.min[i] !== null && b.min[i] < y0) y0 = b.min[i];
        if (b.max[i] !== null && b.max[i] > y1) y1 = b.max[i];
      }
    });
    // An EMA of a constant is that constant up to an ulp; a range that thin would ask the tick maker for
    // ~1e16 ticks. Pad it the way charts.js pads a flat series.
    var scale = Math.max(Math.abs(y0), Math.abs(y1));
    if (y1 - y0 <= scale * 1e-9) {
      var pad = scale * 0.1 || 0.5, mid = (y0 + y1) / 2;
      y0 = mid - pad; y1 = mid + pad;
    }
    return { x0: d.x0, x1: d.x1, y0: y0, y1: y1 };
  };

  OverlayChart.prototype.render = function () {
    LineChart.prototype.render.call(this);
    while (this.bandLayer.firstChild) this.bandLayer.removeChild(this.bandLayer.firstChild);
    var v = this._view;
    if (!v || !this.showBand) return;
    var d = v.d, ph = this.height - 8 - 22;  // charts.js MARGIN top + bottom
    var sy = function (y) { return 8 + (1 - (y - d.y0) / (d.y1 - d.y0)) * ph; };
    var self = this;
    this._visible().forEach(function (s) {
      var b = self.buckets[s.key];
      if (!b || b.steps.length < 2) return;
      var upper = [], lower = [], wide = false;
      for (var i = 0; i < b.steps.length; i++) {
        if (b.min[i] === null || b.max[i] === null) continue;
        var x = v.sx(b.steps[i]).toFixed(1);
        upper.push(x + "," + sy(b.max[i]).toFixed(1));
        lower.push(x + "," + sy(b.min[i]).toFixed(1));
        if (b.max[i] > b.min[i]) wide = true;
      }
      if (!wide) return;  // one point per bucket: the line is the data
      var poly = document.createElementNS("http://www.w3.org/2000/svg", "polygon");
      poly.setAttribute("points", upper.concat(lower.reverse()).join(" "));
      poly.setAttribute("fill", s.color);
      poly.setAttribute("fill-opacity", "0.14");
      poly.setAttribute("data-band", s.key);
      self.bandLayer.appendChild(poly);
    });
  };

  OverlayChart.prototype._hover = function (ev) {
    var all = this.series;
    this.series = this._visible();
    LineChart.prototype._hover.call(this, ev);
    this.series = all;
  };

  global.MicroOverlay = { OverlayChart: OverlayChart, emaBuckets: emaBuckets };
})(window);
