/* The run form, live (templates/training/run_create.html). Without this script the form still works: its
   Check, Download YAML, Load file and Launch buttons go through the server.

   - Every edit re-checks the config through POST /api/runs/check/ (debounced): the insight warnings appear
     next to the field they concern, parse and validation errors next to theirs, the memory plan and the
     resolved YAML follow.
   - Picking a preset sets the fields presets define (clip, KL, mask, temperature...) to its values; the
     others (model, data, lengths) keep what the user entered.
   - "Copy YAML" copies the resolved config; choosing a YAML file loads it through the server.
   No inline handlers: the content security policy forbids them. */
(function () {
  "use strict";
  var form = document.getElementById("run-form");
  if (!form) { return; }
  var checkUrl = form.dataset.checkUrl;
  var insightsUrl = (document.querySelector("a[href*='/training/insights/']") || {}).pathname || "/training/insights/";
  var presetValue = document.getElementById("preset-value");
  var statusEl = document.getElementById("live-check-status");
  var timer = null;
  var generation = 0;

  function csrf() {
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function configInputs() {
    return Array.prototype.slice.call(form.querySelectorAll("[data-config-field]"));
  }

  function formValues() {
    var values = {};
    configInputs().forEach(function (el) { values[el.name] = el.value; });
    return values;
  }

  function gpus() {
    var n = parseInt((document.getElementById("plan-gpus") || {}).value, 10);
    return n >= 1 && n <= 1024 ? n : 1;
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function insightLinks(parent, ids) {
    parent.appendChild(document.createTextNode(" ("));
    ids.forEach(function (id, i) {
      if (i) { parent.appendChild(document.createTextNode(", ")); }
      parent.appendChild(el("a", {href: insightsUrl + "#insight-" + id}, id));
    });
    parent.appendChild(document.createTextNode(")"));
  }

  function fieldBox(path) {
    return form.querySelector('.config-field[data-field="' + path.replace(/"/g, "") + '"]');
  }

  function showWarnings(warnings) {
    form.querySelectorAll(".config-field").forEach(function (box) {
      var slot = box.querySelector("[data-role=warnings]");
      if (slot) { slot.textContent = ""; }
      box.classList.remove("has-warning");
    });
    var list = document.getElementById("warning-list");
    list.textContent = "";
    warnings.forEach(function (w) {
      var box = fieldBox(w.field);
      if (box) {
        var line = el("div", {"class": "warn"}, "⚠ " + w.message);
        insightLinks(line, w.insight_ids);
        box.querySelector("[data-role=warnings]").appendChild(line);
        box.classList.add("has-warning");
      }
      var item = el("li");
      item.appendChild(el("span", {"class": "badge" + (w.severity === "warning" ? " warn" : "")}, w.severity));
      item.appendChild(document.createTextNode(" "));
      var link = el("a", {href: "#f-" + w.field});
      link.appendChild(el("code", {}, w.field));
      item.appendChild(link);
      item.appendChild(document.createTextNode(": " + w.message));
      insightLinks(item, w.insight_ids);
      list.appendChild(item);
    });
    var headline = document.getElementById("check-headline");
    headline.className = warnings.length ? "warn" : "ok";
    headline.textContent = warnings.length
      ? warnings.length + " insight warning" + (warnings.length === 1 ? "" : "s")
      : "The config is valid and raises no insight warnings.";
    document.getElementById("check-result").hidden = false;
    document.querySelectorAll("details.config-section").forEach(function (section) {
      var n = section.querySelectorAll(".config-field.has-warning .warn").length;
      var badge = section.querySelector("[data-role=warn-count]");
      badge.hidden = n === 0;
      badge.textContent = n + " warning" + (n === 1 ? "" : "s");
    });
  }

  function showErrors(fields) {
    form.querySelectorAll(".config-field").forEach(function (box) {
      var slot = box.querySelector("[data-role=error]");
      var path = box.dataset.field;
      var message = path && fields[path];
      if (slot) { slot.textContent = message || ""; }
      box.classList.toggle("has-error", Boolean(message));
      if (message) {
        var section = box.closest("details");
        if (section) { section.open = true; }
      }
    });
  }

  function showMemory(memory) {
    var body = document.getElementById("memory-body");
    var card = document.getElementById("memory-plan");
    body.textContent = "";
    if (memory.error) {
      body.appendChild(el("p", {"class": "warn"}, memory.error));
      card.classList.remove("over");
      return;
    }
    var gib = function (b) { return (b / 1073741824).toFixed(2); };
    var verdict = el("p", {id: "memory-verdict", "class": memory.fits ? "ok" : "error"});
    verdict.textContent = memory.capacity_bytes
      ? gib(memory.total_bytes) + " GiB of " + gib(memory.capacity_bytes) + " GiB: " + (memory.fits ? "fits" : "does not fit")
      : gib(memory.total_bytes) + " GiB estimated (CPU run: no GPU budget)";
    verdict.appendChild(el("span", {"class": "muted"}, " · " + memory.model + ", " + (memory.params / 1e9).toFixed(2) +
      " B params, " + memory.gpus + " GPU" + (memory.gpus === 1 ? "" : "s")));
    body.appendChild(verdict);
    if (memory.capacity_bytes) {
      var bar = el("div", {"class": "bar"});
      var fill = el("span");
      fill.style.width = Math.min(100, Math.round(100 * memory.total_bytes / memory.capacity_bytes)) + "%";
      bar.appendChild(fill);
      body.appendChild(bar);
    }
    var table = el("table");
    var head = el("tr");
    ["Component", "Phase", "GiB", "Note"].forEach(function (h) { head.appendChild(el("th", h === "GiB" ? {"class": "num"} : {}, h)); });
    table.appendChild(el("thead")).appendChild(head);
    var tbody = table.appendChild(el("tbody"));
    memory.components.forEach(function (c) {
      var row = el("tr", {"data-component": c.key});
      row.appendChild(el("td", {}, c.label));
      row.appendChild(el("td", {}, c.phase));
      row.appendChild(el("td", {"class": "num"}, gib(c.bytes)));
      row.appendChild(el("td", {"class": "muted"}, c.note));
      tbody.appendChild(row);
    });
    body.appendChild(table);
    if (memory.advice.length) {
      body.appendChild(el("h3", {}, "What to change"));
      var list = el("ul", {id: "memory-advice"});
      memory.advice.forEach(function (a) { list.appendChild(el("li", {}, a)); });
      body.appendChild(list);
    }
    memory.notes.forEach(function (n) { body.appendChild(el("p", {"class": "muted"}, n)); });
    card.classList.toggle("over", !memory.fits);
  }

  function showYaml(text) {
    document.getElementById("resolved-yaml").textContent = text;
    document.getElementById("copy-yaml").disabled = !text;
  }

  function post(body) {
    return fetch(checkUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRFToken": csrf(), "Accept": "application/json"},
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        return {ok: response.ok, status: response.status, data: data};
      });
    });
  }

  function check() {
    var mine = ++generation;
    if (statusEl) { statusEl.textContent = "checking…"; }
    form.dataset.checking = "1";
    var body = {form: formValues(), gpus: gpus()};
    if (presetValue.value) { body.preset = presetValue.value; }
    return post(body).then(function (result) {
      if (mine !== generation) { return; }  // a newer edit is being checked
      delete form.dataset.checking;
      if (result.ok) {
        showErrors({});
        showWarnings(result.data.warnings);
        showMemory(result.data.memory);
        showYaml(result.data.yaml);
        if (statusEl) { statusEl.textContent = "Checked live as you edit."; }
      } else if (result.status !== 400) {
        if (statusEl) { statusEl.textContent = "Live check unavailable (HTTP " + result.status + "): use the Check button."; }
      } else {
        var fields = result.data.fields || {};
        showErrors(fields);
        showYaml("");
        if (statusEl) {
          var other = (result.data.config || []).filter(function (m) { return !Object.keys(fields).some(function (f) { return fields[f] === m; }); });
          statusEl.textContent = other.length ? "Invalid: " + other.join("; ") : "Fix the values marked in red.";
        }
      }
      form.dataset.checked = String(generation);
    }).catch(function () {
      if (mine === generation) {
        delete form.dataset.checking;
        if (statusEl) { statusEl.textContent = "Live check unavailable: use the Check button."; }
      }
    });
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(check, 400);
  }

  form.addEventListener("input", function (event) {
    if (event.target.matches("[data-config-field], #plan-gpus")) { schedule(); }
  });
  form.addEventListener("change", function (event) {
    if (event.target.matches("select[data-config-field], #plan-gpus")) { schedule(); }
    if (event.target.id === "config-file" && event.target.files.length) {
      var action = el("input", {type: "hidden", name: "action", value: "upload"});
      form.appendChild(action);
      form.submit();  // the server parses and validates the file, each error next to its field
    }
  });

  // presets: fill the form with the preset's resolved values without leaving the page
  var applyPreset = document.getElementById("apply-preset");
  if (applyPreset) { applyPreset.hidden = true; }
  document.querySelectorAll("input[data-preset]").forEach(function (radio) {
    radio.addEventListener("change", function () {
      var name = radio.value;
      document.querySelectorAll("#preset-choice label").forEach(function (l) { l.classList.toggle("selected", l.contains(radio)); });
      var body = {config: {}, gpus: gpus()};
      if (name) { body.preset = name; }
      post(body).then(function (result) {
        if (!result.ok) { return; }
        presetValue.value = name;
        // the fields presets set take the new preset's values (or the defaults); the rest keep the user's
        var presetFields = (form.dataset.presetFields || "").split(",");
        configInputs().forEach(function (input) {
          if (presetFields.indexOf(input.name) >= 0 && Object.prototype.hasOwnProperty.call(result.data.form, input.name)) {
            input.value = result.data.form[input.name];
          }
        });
        var summary = document.getElementById("preset-summary");
        if (summary) { summary.hidden = true; }
        check();
      });
    });
  });

  document.getElementById("copy-yaml").addEventListener("click", function () {
    var pre = document.getElementById("resolved-yaml");
    var button = this;
    function done() { button.dataset.copied = "1"; button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy YAML"; }, 1500); }
    function fallback() {  // no clipboard API (or no permission): copy the selected text
      var range = document.createRange();
      range.selectNodeContents(pre);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      if (document.execCommand("copy")) { done(); } else { button.textContent = "Select and copy the text below"; }
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(pre.textContent).then(done, fallback);
    } else {
      fallback();
    }
  });
})();
