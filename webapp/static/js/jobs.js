/*
 * MicroJobs: the live parts of the jobs view (templates/jobs/*.html), on top of MicroLive (live.js).
 *
 *   MicroJobs.followList("jobs")            // the list: rows update, new matching jobs appear on page 1
 *   MicroJobs.followOne("job-one", "job-log") // one job: its bar, status and log lines
 *   MicroJobs.uploadWithProgress("import-form", "upload-progress") // a file upload's bytes sent
 *
 * Both listen to ws/jobs/ ("jobs.update" frames: one job's row and its new log lines). A reconnect
 * resyncs from the server (the list re-reads its rows; the job page reloads), so nothing missed while
 * the socket was down stays missing. Text from the server is set with textContent, never as HTML.
 */
(function (global) {
  "use strict";

  function field(root, name) { return root.querySelector('[data-field="' + name + '"]'); }

  function setStatus(root, d) {
    var badge = field(root, "status");
    if (!badge) return;
    badge.textContent = d.status;
    badge.className = "badge " + ({ succeeded: "ok", failed: "bad" }[d.status] || "warn");
  }

  function setProgress(root, d) {
    var bar = field(root, "bar");
    if (bar) {
      if (d.percent === null || d.percent === undefined) { bar.removeAttribute("value"); bar.textContent = ""; }
      else { bar.value = d.percent; bar.textContent = d.percent + " %"; }
    }
    var text = field(root, "progress_text");
    if (text) text.textContent = d.progress_text;
    var reason = field(root, "reason");
    if (reason) reason.textContent = d.reason.length > 140 ? d.reason.slice(0, 139) + "…" : d.reason;
  }

  function canCancel(table, d) {
    if (!d.cancellable) return false;
    var roles = (table.dataset.viewerRoles || "").split(" ");
    if (roles.indexOf("admin") >= 0) return true;
    if (String(d.owner_id) !== table.dataset.viewerId) return false;
    return d.manage_roles.some(function (r) { return roles.indexOf(r) >= 0; });
  }

  function cancelForm(table, d) {
    var form = document.createElement("form");
    form.method = "post";
    form.action = d.log_url + "cancel/";
    form.className = "inline job-cancel";
    form.dataset.confirm = "Cancel " + d.kind_label.toLowerCase() + " #" + d.id + " (" + d.title.slice(0, 60) + ")?";
    [["csrfmiddlewaretoken", table.dataset.csrf], ["next", table.dataset.next]].forEach(function (kv) {
      var input = document.createElement("input");
      input.type = "hidden"; input.name = kv[0]; input.value = kv[1];
      form.appendChild(input);
    });
    var button = document.createElement("button");
    button.type = "submit"; button.textContent = "Cancel";
    form.appendChild(button);
    return form;
  }

  function cell(tr, child, cls, name) {
    var td = document.createElement("td");
    if (cls) td.className = cls;
    if (name) td.dataset.field = name;
    if (typeof child === "string") td.textContent = child; else if (child) td.appendChild(child);
    tr.appendChild(td);
    return td;
  }

  function link(href, text, name) {
    var a = document.createElement("a");
    a.href = href; a.textContent = text;
    if (name) a.dataset.field = name;
    return a;
  }

  function newRow(table, d) {
    var tr = document.createElement("tr");
    tr.dataset.job = d.key;
    cell(tr, d.kind_label);
    cell(tr, link(d.detail_url, "#" + d.id + " " + d.title, "title"));
    cell(tr, d.owner_name || "—");
    var badge = document.createElement("span");
    badge.dataset.field = "status";
    cell(tr, badge);
    var wrap = document.createElement("span");
    wrap.className = "job-progress";
    var bar = document.createElement("progress");
    bar.max = 100; bar.dataset.field = "bar";
    var text = document.createElement("span");
    text.className = "muted"; text.dataset.field = "progress_text";
    wrap.appendChild(bar); wrap.appendChild(document.createTextNode(" ")); wrap.appendChild(text);
    cell(tr, wrap);
    cell(tr, "", "muted", "reason");
    cell(tr, d.created_at.replace("T", " ").slice(0, 19));
    cell(tr, link(d.log_url, "log"));
    cell(tr, null, "", "actions");
    return tr;
  }

  function matches(table, d) {
    var f = table.dataset;
    if (f.page !== "1") return false;
    if (f.kind && f.kind !== d.kind) return false;
    if (f.status === "active" && d.terminal) return false;
    if (f.status && f.status !== "active" && f.status !== d.status) return false;
    if (f.mine && String(d.owner_id) !== f.viewerId) return false;
    return true;
  }

  function upsert(table, d) {
    var body = table.tBodies[0];
    var tr = body.querySelector('tr[data-job="' + d.key + '"]');
    if (!tr) {
      if (!matches(table, d)) return;
      tr = newRow(table, d);
      var empty = body.querySelector("tr.empty");
      if (empty) empty.remove();
      body.insertBefore(tr, body.firstChild);
      var count = document.getElementById("job-count");
      if (count) count.textContent = String(Number(count.textContent) + 1);
    }
    tr.dataset.status = d.status;
    setStatus(tr, d);
    setProgress(tr, d);
    var actions = field(tr, "actions");
    if (actions) {
      var has = actions.querySelector("form");
      var want = canCancel(table, d);
      if (has && !want) has.remove();
      if (!has && want) actions.appendChild(cancelForm(table, d));
    }
  }

  function followList(id) {
    var table = document.getElementById(id);
    if (!table || !global.WebSocket) return null;
    return global.MicroLive.connect(table.dataset.wsPath, {
      onState: global.MicroLive.indicator(document.getElementById("live-dot"), document.getElementById("live-state")),
      onOpen: function (reconnected) {
        if (!reconnected) return null;
        var url = global.location.pathname + global.location.search + (global.location.search ? "&" : "?") + "fragment=rows";
        return global.fetch(url, { credentials: "same-origin" })
          .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
          .then(function (html) { table.tBodies[0].innerHTML = html; });
      },
      onMessage: function (msg) { if (msg.type === "jobs.update") upsert(table, msg.data); },
    });
  }

  function followOne(boxId, logId) {
    var box = document.getElementById(boxId), list = document.getElementById(logId);
    if (!box || !global.WebSocket) return null;
    var live = global.MicroLive.connect(box.dataset.wsPath, {
      onState: global.MicroLive.indicator(document.getElementById("live-dot"), document.getElementById("live-state")),
      onOpen: function (reconnected) { if (reconnected) global.location.reload(); },
      onMessage: function (msg) {
        if (msg.type !== "jobs.update" || msg.data.key !== box.dataset.key) return;
        var d = msg.data;
        box.dataset.status = d.status;
        setStatus(box, d);
        setProgress(box, d);
        var empty = list.querySelector("li.empty");
        if (empty && d.log.length) empty.remove();
        d.log.forEach(function (line) {
          var li = document.createElement("li");
          if (line.level === "error") li.className = "error";
          li.textContent = line.at.replace("T", " ").slice(0, 19) + " [" + line.status + "] " + line.message;
          list.appendChild(li);
        });
        if (d.terminal) {
          var form = box.querySelector("form.job-cancel");
          if (form) form.remove();
          if (d.finished_at) field(box, "finished").textContent = d.finished_at.replace("T", " ").slice(0, 19);
          live.stop();
        }
      },
    });
    return live;
  }

  function size(n) {
    var units = ["B", "KiB", "MiB", "GiB"], i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
    return (i ? n.toFixed(1) : String(n)) + " " + units[i];
  }

  /*
   * uploadWithProgress(formId, boxId): send a file form with XMLHttpRequest so the page shows the
   * upload's progress (bytes sent of the total), then go where the server redirected (the import's
   * live page). A form the server sends back (invalid: errors beside the fields) replaces the page's
   * <main>. Without XMLHttpRequest/FormData the form posts as usual.
   */
  function uploadWithProgress(formId, boxId) {
    var form = document.getElementById(formId), box = document.getElementById(boxId);
    if (!form || !box || !global.XMLHttpRequest || !global.FormData) return;
    var bar = field(box, "bar"), text = field(box, "text");
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var button = form.querySelector('button[type="submit"]');
      var xhr = new global.XMLHttpRequest();
      var target = form.action || global.location.href;
      xhr.open("POST", target);
      box.hidden = false;
      bar.value = 0;
      text.textContent = "uploading…";
      if (button) button.disabled = true;
      xhr.upload.onprogress = function (e) {
        if (!e.lengthComputable) return;
        bar.value = Math.round(100 * e.loaded / e.total);
        text.textContent = size(e.loaded) + " of " + size(e.total) + " uploaded";
      };
      xhr.upload.onload = function () {
        bar.removeAttribute("value");
        text.textContent = "uploaded; checking the file…";
      };
      xhr.onerror = function () {
        text.textContent = "the upload failed (network error); nothing was imported";
        if (button) button.disabled = false;
      };
      xhr.onload = function () {
        var moved = xhr.responseURL && xhr.responseURL.split("#")[0] !== target.split("#")[0];
        if (xhr.status === 200 && moved) { global.location.assign(xhr.responseURL); return; }
        if (xhr.status === 200) {
          var doc = new global.DOMParser().parseFromString(xhr.responseText, "text/html");
          var main = doc.querySelector("main");
          if (main) {
            document.querySelector("main").replaceWith(document.importNode(main, true));
            uploadWithProgress(formId, boxId);
            return;
          }
        }
        text.textContent = "the server refused the upload (HTTP " + xhr.status + "): " + (xhr.responseText || "").slice(0, 300);
        bar.value = 0;
        if (button) button.disabled = false;
      };
      xhr.send(new global.FormData(form));
    });
  }

  global.MicroJobs = { followList: followList, followOne: followOne, uploadWithProgress: uploadWithProgress };
})(window);
