// Job page: poll the status endpoint every 700 ms and update the progress bar and phase;
// go to the result when the job succeeds, reload to show the final state otherwise.
(function () {
  "use strict";
  var dataEl = document.getElementById("job-status-data");
  if (!dataEl) return;
  var state = JSON.parse(dataEl.textContent);
  if (state.finished) return;

  var bar = document.getElementById("progress-bar");
  var percent = document.getElementById("progress-percent");
  var phase = document.getElementById("progress-phase");
  var badge = document.getElementById("job-status");
  var progressbar = bar ? bar.parentElement : null;
  var failures = 0;

  function render(s) {
    var pct = Math.round(s.progress * 1000) / 10;
    if (bar) bar.style.width = pct + "%";
    if (progressbar) progressbar.setAttribute("aria-valuenow", String(pct));
    if (percent) percent.textContent = pct + "%";
    if (phase) phase.textContent = s.phase || (s.status === "queued" ? "waiting for a worker" : s.status);
    if (badge) {
      badge.textContent = s.status;
      badge.className = "badge badge-" + s.status;
    }
  }

  function poll() {
    fetch(state.status_url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.json();
      })
      .then(function (s) {
        failures = 0;
        render(s);
        if (s.status === "succeeded" && s.result_url) {
          if (bar) bar.classList.add("done");
          window.location.assign(s.result_url);
        } else if (s.finished) {
          window.location.reload();
        } else {
          window.setTimeout(poll, 700);
        }
      })
      .catch(function () {
        failures += 1;  // back off while the server is unreachable
        window.setTimeout(poll, Math.min(700 * Math.pow(2, failures), 15000));
      });
  }
  window.setTimeout(poll, 700);
})();
