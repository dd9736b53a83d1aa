/*
 * MicroCompare: the run comparison page (/training/compare/) and the sweep page's live run table.
 * Needs charts.js (MicroCharts), overlay_chart.js (MicroOverlay, the charts) and live.js (MicroLive).
 *
 *   MicroCompare.comparePage(configElement)           // reads {run_ids, panels, points} JSON
 *   MicroCompare.followSweepTable(table, badge, onState)
 *
 * Data: /api/runs/compare/ returns per metric and run the server's buckets (last step, mean, min,
 * max, count; a shared grid, min/max kept so spikes survive), drawn by MicroOverlay.OverlayChart as
 * an EMA line and a min/max band per run. Live points from
 * each running run's websocket (/ws/runs/<id>/) are appended as one-point buckets.
 *
 * Contracts: a run's colour depends only on its id (runColor), so it is the same on every page and
 * after a reload; chart series are keyed "run-<id>" (window.compareCharts[metric].byKey["run-7"]).
 */
(function (global) {
  "use strict";

  var TERMINAL = ["succeeded", "failed", "cancelled"];
  var OverlayChart = global.MicroOverlay && global.MicroOverlay.OverlayChart;
  var fmtNum = global.MicroCharts ? global.MicroCharts.formatNumber : String;

  /* A stable, well-spread colour per run id (golden-angle hues). */
  function runColor(id) {
    var hue = Math.round((Number(id) * 137.508) % 360);
    return "hsl(" + hue + ", 65%, " + (hue > 40 && hue < 200 ? 34 : 46) + "%)";
  }

  function statusClass(status) {
    return "badge" + (status === "succeeded" ? " ok" : status === "failed" ? " bad" : status === "cancelled" ? " warn" : "");
  }

  function sweepStatus(statuses) {
    var c = {};
    statuses.forEach(function (s) { c[s] = (c[s] || 0) + 1; });
    if (!statuses.length) return "empty";
    if (c.running) return "running";
    if (c.queued) return c.queued === statuses.length ? "queued" : "running";
    if (c.failed) return "failed";
    if (c.cancelled) return "cancelled";
    return "succeeded";
  }

  // --- the comparison page -----------------------------------------------------------------------
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    for (var k in attrs || {}) if (Object.prototype.hasOwnProperty.call(attrs, k)) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function wall(seconds) {
    if (seconds === null || seconds === undefined) return "–";
    var s = Math.round(seconds), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    if (h) return h + "h " + (m < 10 ? "0" : "") + m + "m";
    if (m) return m + "m " + (s % 60 < 10 ? "0" : "") + (s % 60) + "s";
    return s + "s";
  }

  function comparePage(configEl) {
    var cfg = JSON.parse(configEl.textContent);
    var chartsEl = document.getElementById("compare-charts");
    var legendEl = document.getElementById("compare-legend");
    var slider = document.getElementById("smoothing");
    var sliderValue = document.getElementById("smoothing-value");
    var bandBox = document.getElementById("show-band");
    var runs = {}, order = [], charts = {}, panels = {}, summary = {}, lowerBetter = {};
    var sortKey = "id", sortDir = 1, tableFrame = null;
    global.compareCharts = charts;

    function spec(id) { return { key: "run-" + id, label: "#" + id + " " + runs[id].name, color: runColor(id) }; }

    var always = {};
    cfg.panels.forEach(function (p) {
      always[p.metric] = p.always;
      var box = el("div", { "class": "chart", "data-metric": p.metric });
      chartsEl.appendChild(box);
      charts[p.metric] = new OverlayChart(box, { title: p.title, smoothing: Number(slider.value), height: 190 });
      panels[p.metric] = box;
    });

    function showPanels() {
      Object.keys(panels).forEach(function (m) {
        var hasData = charts[m].series.some(function (s) { return s.xs.length > 0; });
        panels[m].hidden = !hasData && !always[m];
      });
    }

    function buildLegend() {
      legendEl.innerHTML = "";
      order.forEach(function (id) {
        var r = runs[id];
        var item = el("label", { "class": "compare-key", "data-run": id });
        var box = el("input", { type: "checkbox" });
        box.checked = !r.hidden;
        box.addEventListener("change", function () {
          r.hidden = !box.checked;
          Object.keys(charts).forEach(function (m) { charts[m].setHidden("run-" + id, r.hidden); });
        });
        item.appendChild(box);
        var sw = el("i");
        sw.style.background = runColor(id);
        item.appendChild(sw);
        var link = el("a", { href: "/training/runs/" + id + "/" }, "#" + id + " " + r.name);
        item.appendChild(link);
        r.badge = el("span", { "class": statusClass(r.status) }, r.status);
        item.appendChild(document.createTextNode(" "));
        item.appendChild(r.badge);
        legendEl.appendChild(item);
      });
    }

    function noteValue(id, metric, step, value) {
      if (value === null || value === undefined || value !== value) return;
      var s = summary[id][metric] || (summary[id][metric] = { final: null, best: null, best_step: null, final_step: null });
      if (s.final_step === null || step >= s.final_step) { s.final = value; s.final_step = step; }
      var better = s.best === null || (lowerBetter[metric] ? value < s.best : value > s.best);
      if (better) { s.best = value; s.best_step = step; }
    }

    function columns() {
      var cols = [{ key: "id", title: "run" }, { key: "status", title: "status" }, { key: "step", title: "step" },
        { key: "wall", title: "wall time" }];
      cfg.panels.forEach(function (p) {
        if (panels[p.metric].hidden) return;
        cols.push({ key: p.metric + "|final", title: p.metric + " final", metric: p.metric, field: "final" });
        cols.push({ key: p.metric + "|best", title: "best", metric: p.metric, field: "best" });
        cols.push({ key: p.metric + "|best_step", title: "@step", metric: p.metric, field: "best_step" });
      });
      return cols;
    }

    function cellValue(id, col) {
      var r = runs[id];
      if (col.key === "id") return id;
      if (col.key === "status") return r.status;
      if (col.key === "step") return r.last_step;
      if (col.key === "wall") {
        if (!r.started) return null;
        return ((r.finished || Date.now()) - r.started) / 1000;
      }
      var s = summary[id][col.metric];
      return s ? s[col.field] : null;
    }

    function renderTable() {
      tableFrame = null;
      var table = document.getElementById("compare-summary");
      var cols = columns();
      table.innerHTML = "";
      var head = el("tr");
      cols.forEach(function (c) {
        var th = el("th", { "data-sort": c.key, "class": "sortable" }, c.title + (sortKey === c.key ? (sortDir > 0 ? " ▲" : " ▼") : ""));
        th.addEventListener("click", function () {
          if (sortKey === c.key) sortDir = -sortDir;
          else { sortKey = c.key; sortDir = !c.metric || c.field === "best_step" || lowerBetter[c.metric] ? 1 : -1; }
          renderTable();
        });
        head.appendChild(th);
      });
      var thead = el("thead");
      thead.appendChild(head);
      table.appendChild(thead);
      var sortCol = cols.filter(function (c) { return c.key === sortKey; })[0] || cols[0];
      var ids = order.slice().sort(function (a, b) {
        var va = cellValue(a, sortCol), vb = cellValue(b, sortCol);
        if (va === vb) return a - b;
        if (va === null || va === undefined) return 1;
        if (vb === null || vb === undefined) return -1;
        return (va < vb ? -1 : 1) * sortDir;
      });
      var body = el("tbody");
      ids.forEach(function (id) {
        var tr = el("tr", { "data-run": id });
        cols.forEach(function (c) {
          var v = cellValue(id, c), td = el("td");
          if (c.key === "id") {
            var sw = el("i", { "class": "swatch" });
            sw.style.background = runColor(id);
            td.appendChild(sw);
            td.appendChild(el("a", { href: "/training/runs/" + id + "/" }, "#" + id + " " + runs[id].name));
          } else if (c.key === "status") td.appendChild(el("span", { "class": statusClass(v) }, v));
          else if (c.key === "wall") td.textContent = wall(v);
          else if (c.key === "step" || c.field === "best_step") td.textContent = v === null || v === undefined ? "–" : v;
          else td.textContent = fmtNum(v);
          tr.appendChild(td);
        });
        body.appendChild(tr);
      });
      table.appendChild(body);
    }

    function scheduleTable() {
      if (tableFrame === null) tableFrame = (global.requestAnimationFrame || setTimeout)(renderTable);
    }

    function load() {
      // one bucket per 2 pixels of a chart (two charts per row): smooth lines, half the bytes
      var points = Math.min(cfg.points, Math.max(100, Math.floor(chartsEl.clientWidth / 4)));
      var url = "/api/runs/compare/?runs=" + cfg.run_ids.join(",") + "&metrics=" +
        encodeURIComponent(cfg.panels.map(function (p) { return p.metric; }).join(",")) + "&points=" + points;
      return fetch(url, { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (body) {
        order = [];
        (body.runs || []).forEach(function (info) {
          var prev = runs[info.id] || {};
          runs[info.id] = { name: info.name, status: info.status, last_step: info.last_step, hidden: !!prev.hidden,
            started: info.started_at ? Date.parse(info.started_at) : null,
            finished: info.finished_at ? Date.parse(info.finished_at) : null };
          summary[info.id] = {};
          order.push(info.id);
        });
        Object.keys(body.metrics || {}).forEach(function (m) {
          var entry = body.metrics[m];
          lowerBetter[m] = entry.lower_is_better;
          if (!charts[m]) return;
          Object.keys(entry.runs).forEach(function (rid) {
            var data = entry.runs[rid], id = Number(rid);
            charts[m].setBuckets("run-" + id, spec(id), data);
            summary[id][m] = data.summary;
          });
        });
        order.forEach(function (id) {  // every run in every chart (legend order), even without data yet
          Object.keys(charts).forEach(function (m) { charts[m].addSeries(spec(id)); charts[m].setHidden("run-" + id, runs[id].hidden); });
        });
        buildLegend();
        showPanels();
        renderTable();
      });
    }

    function onMetrics(id, d) {
      var r = runs[id];
      if (!r || d.step === null || d.step === undefined) return;
      if (r.last_step === null || d.step > r.last_step) r.last_step = d.step;
      Object.keys(d.metrics || {}).forEach(function (m) {
        noteValue(id, m, d.step, d.metrics[m]);
        if (charts[m]) charts[m].appendPoint("run-" + id, spec(id), d.step, d.metrics[m]);
      });
      showPanels();
      scheduleTable();
    }

    function onStatus(id, d) {
      var r = runs[id];
      if (!r) return;
      if (r.status !== d.status && d.status === "running" && !r.started) r.started = Date.now();
      if (TERMINAL.indexOf(d.status) >= 0 && !r.finished) r.finished = Date.now();
      r.status = d.status;
      if (r.badge) { r.badge.textContent = d.status; r.badge.className = statusClass(d.status); }
      scheduleTable();
    }

    slider.addEventListener("input", function () {
      var s = Number(slider.value);
      sliderValue.textContent = s.toFixed(2);
      Object.keys(charts).forEach(function (m) { charts[m].setSmoothing(s); });
    });
    bandBox.addEventListener("change", function () {
      Object.keys(charts).forEach(function (m) { charts[m].showBand = bandBox.checked; charts[m].scheduleRender(); });
    });

    var initial = load();
    var sockets = {};
    global.compareLive = sockets;
    var states = {};
    var indicator = global.MicroLive.indicator(document.getElementById("live-dot"), document.getElementById("live-text"));
    function overall() {
      var keys = Object.keys(states);
      if (!keys.length) { indicator("closed"); return; }
      var live = keys.filter(function (k) { return states[k] === "live"; }).length;
      indicator(live === keys.length ? "live" : live ? "reconnecting" : states[keys[0]]);
    }
    initial.then(function () {
      order.forEach(function (id) {
        if (TERMINAL.indexOf(runs[id].status) >= 0) return;
        sockets[id] = global.MicroLive.connect("/ws/runs/" + id + "/", {
          onMessage: function (msg) {
            if (msg.type === "run.metrics") onMetrics(id, msg.data);
            else if (msg.type === "run.status") {
              onStatus(id, msg.data);
              if (TERMINAL.indexOf(msg.data.status) >= 0) { delete states[id]; sockets[id].stop(); overall(); }
            }
          },
          onState: function (s) { if (s !== "closed") states[id] = s; overall(); },
          onOpen: function (reconnected) { return reconnected ? load() : null; },
        });
      });
      overall();
    });
    setInterval(function () {  // wall time of running runs
      if (order.some(function (id) { return runs[id].status === "running"; })) scheduleTable();
    }, 5000);
  }

  // --- the sweep page's run table ------------------------------------------------------------------
  function followSweepTable(table, badge, onState) {
    var rows = Array.prototype.slice.call(table.querySelectorAll("tr[data-run]"));
    function refreshBadge() {
      var status = sweepStatus(rows.map(function (tr) { return tr.dataset.status; }));
      badge.textContent = status;
      badge.className = statusClass(status);
    }
    var open = 0;
    rows.forEach(function (tr) {
      if (TERMINAL.indexOf(tr.dataset.status) >= 0) return;
      open += 1;
      var id = tr.dataset.run;
      var live = global.MicroLive.connect("/ws/runs/" + id + "/", {
        onState: onState,
        onMessage: function (msg) {
          var d = msg.data;
          if (msg.type === "run.status") {
            tr.dataset.status = d.status;
            var b = tr.querySelector(".run-status");
            b.textContent = d.status;
            b.className = statusClass(d.status) + " run-status";
            refreshBadge();
            if (TERMINAL.indexOf(d.status) >= 0) live.stop();
          } else if (msg.type === "run.metrics" && d.step !== null) {
            var cell = tr.querySelector(".run-step");
            cell.textContent = d.step + " / " + cell.textContent.split("/").pop().trim();
            if (d.metrics && d.metrics.reward !== undefined) tr.querySelector(".run-reward").textContent = fmtNum(d.metrics.reward);
          }
        },
      });
    });
    if (!open) onState("closed");
  }

  global.MicroCompare = { runColor: runColor,
    comparePage: comparePage, followSweepTable: followSweepTable, sweepStatus: sweepStatus };
})(window);
