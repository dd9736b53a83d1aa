/*
 * MicroLive: one websocket for a live page that stays live.
 *
 *   var live = MicroLive.connect("/ws/runs/7/", {
 *     onMessage: function (msg) { ... },        // each {"type", "data"} frame, in order
 *     onOpen: function (reconnected) { ... },   // every (re)connect: resync what may have been missed
 *     onState: function (state) { ... },        // "connecting" | "live" | "reconnecting" | "not allowed" | "not found" | "closed"
 *   });
 *   live.stop();                                // close for good (e.g. the job finished)
 *
 * Contract:
 * - A socket that closes for any reason but stop() or a refusal (close code 4403: not allowed, 4404: no
 *   such live stream; the server accepts and then closes so that the browser sees the code) is
 *   reopened after an exponential back-off with full jitter: a random delay in [0, min(maxDelayMs,
 *   minDelayMs * 2^attempt)], so many pages that lost the same server do not come back in lockstep.
 *   The attempt count resets once a socket stayed open for stableMs.
 * - The server sends a snapshot on every join; onOpen(reconnected) lets the page fetch anything the
 *   snapshot does not carry (the run page re-fetches the metric steps after the last one it has).
 *   When onOpen returns a promise, frames that arrive before it settles are queued and delivered
 *   afterwards, in arrival order (so a live point never lands before the history it follows).
 */
(function (global) {
  "use strict";

  function connect(path, options) {
    var opts = options || {};
    var minDelay = opts.minDelayMs || 1000;
    var maxDelay = opts.maxDelayMs || 30000;
    var stableMs = opts.stableMs || 10000;
    var onMessage = opts.onMessage || function () {};
    var onOpen = opts.onOpen || function () {};
    var onState = opts.onState || function () {};
    var handle = { socket: null, attempts: 0, connects: 0, stopped: false, stop: stop };
    var timer = null, openedAt = 0, queue = null;

    function url() {
      return (global.location.protocol === "https:" ? "wss://" : "ws://") + global.location.host + path;
    }

    function deliver(msg) {
      if (queue) queue.push(msg); else onMessage(msg);
    }

    function flush() {
      var pending = queue || [];
      queue = null;
      pending.forEach(onMessage);
    }

    function open() {
      timer = null;
      if (handle.stopped) return;
      onState(handle.connects ? "reconnecting" : "connecting");
      var ws = new global.WebSocket(url());
      handle.socket = ws;
      ws.onopen = function () {
        openedAt = Date.now();
        var reconnected = handle.connects > 0;
        handle.connects += 1;
        onState("live");
        queue = [];
        var resync;
        try { resync = onOpen(reconnected); } catch (err) { resync = null; }
        if (resync && typeof resync.then === "function") resync.then(flush, flush); else flush();
      };
      ws.onmessage = function (ev) {
        var msg;
        try { msg = JSON.parse(ev.data); } catch (err) { return; }
        deliver(msg);
      };
      ws.onclose = function (ev) {
        if (handle.socket !== ws) return;
        handle.socket = null;
        if (queue) flush();
        if (handle.stopped) { onState("closed"); return; }
        if (ev.code === 4403 || ev.code === 4404) {
          handle.stopped = true;
          onState(ev.code === 4403 ? "not allowed" : "not found");
          return;
        }
        if (openedAt && Date.now() - openedAt >= stableMs) handle.attempts = 0;
        openedAt = 0;
        var ceiling = Math.min(maxDelay, minDelay * Math.pow(2, handle.attempts));
        handle.attempts += 1;
        onState("reconnecting");
        timer = global.setTimeout(open, Math.random() * ceiling);
      };
    }

    function stop() {
      handle.stopped = true;
      if (timer !== null) { global.clearTimeout(timer); timer = null; }
      if (handle.socket) handle.socket.close(1000);
      else onState("closed");
    }

    open();
    return handle;
  }

  /* onState for the page's "live" indicator: a dot (class "on" while live) and a word. */
  function indicator(dot, word) {
    var words = { live: "live", reconnecting: "reconnecting…", connecting: "connecting…",
                  "not allowed": "not allowed", "not found": "not found" };
    return function (s) {
      if (dot) dot.classList.toggle("on", s === "live");
      if (word) word.textContent = words[s] || "live updates off";
    };
  }

  /*
   * followJob: the live part of a job page (import, judge job, scoring, model evaluation).
   *   MicroLive.followJob({ box: "job", event: "job.progress", onData: function (d) { ... } })
   * The element with id `box` carries data-ws-path and data-status; nothing happens when the job has
   * already ended (`terminal`, default succeeded/failed/cancelled). Each `event` frame goes to onData;
   * a frame with a terminal status stops the socket and reloads, so the server renders the results.
   * The indicator is #live-dot / #live-state. Returns the MicroLive handle (or null).
   */
  function followJob(opts) {
    var box = document.getElementById(opts.box);
    if (!box || !global.WebSocket) return null;
    var terminal = opts.terminal || ["succeeded", "failed", "cancelled"];
    if (terminal.indexOf(box.dataset.status) >= 0) return null;
    var live = connect(box.dataset.wsPath, {
      onState: indicator(document.getElementById("live-dot"), document.getElementById("live-state")),
      onMessage: function (msg) {
        if (msg.type !== opts.event) return;
        opts.onData(msg.data, box);
        if (terminal.indexOf(msg.data.status) >= 0) { live.stop(); global.location.reload(); }
      },
    });
    return live;
  }

  global.MicroLive = { connect: connect, indicator: indicator, followJob: followJob };
})(window);
