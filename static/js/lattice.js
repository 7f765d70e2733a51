// Solution lattice page: the lattice's nodes (levels as rows, y = sum of levels, x = position within
// the level) drawn as SVG, with WebGL (scattergl) above GL_FROM nodes; a filter (frontier + best N, all, only anonymous, metric
// range); a click shows the node's table and metrics (JSON endpoint, cached server-side) and lets the
// user keep it as the result. plotly.min.js is served from /static/vendor/plotly/.
(function () {
  "use strict";
  var urlsEl = document.getElementById("lattice-urls");
  var chart = document.getElementById("lattice-chart");
  if (!urlsEl || !chart) return;
  var urls = JSON.parse(urlsEl.textContent);
  // the run's attribute weights per QI (text), {} for an unweighted run: a column of the node table
  var weightsEl = document.getElementById("lattice-weights-data");
  var weightOf = weightsEl ? JSON.parse(weightsEl.textContent) : {};
  var weighted = Object.keys(weightOf).length > 0;
  var statusEl = document.getElementById("lattice-status");
  var data = null;
  var selected = null; // index of the clicked node
  var hoverText = []; // hover text per node, built once (a click redraws every trace)
  var TAGS = { A: "anonymous (checked)", a: "anonymous (predicted)", N: "not anonymous (checked)",
               n: "not anonymous (predicted)", "?": "not known" };
  var config = { responsive: true, displaylogo: false, scrollZoom: true,
                 modeBarButtonsToRemove: ["select2d", "lasso2d"] };

  function $(id) { return document.getElementById(id); }
  function fmt(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v)) return v.toLocaleString("en-US");
    return Math.abs(v) >= 1000 ? Math.round(v).toLocaleString("en-US") : v.toPrecision(4);
  }
  function text(el, s) { el.textContent = s; return el; }
  function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); }
  function make(tag, cls, s) {
    var el = document.createElement(tag);
    if (cls) el.className = cls;
    if (s !== undefined) el.textContent = s;
    return el;
  }
  function isAnonymous(i) { var t = data.nodes.tag[i]; return t === "A" || t === "a"; }

  function hover(i) {
    var lv = data.nodes.levels[i].split(",");
    var lines = ["<b>" + escapeHtml(data.nodes.levels[i]) + "</b> (level " + data.nodes.rank[i] + ")"];
    for (var j = 0; j < data.qi.length; j++) {
      lines.push(escapeHtml(data.qi[j]) + ": " + lv[j] + " — " + escapeHtml(data.labels[j][+lv[j]]));
    }
    lines.push(TAGS[data.nodes.tag[i]] || escapeHtml(data.nodes.tag[i]));
    lines.push(escapeHtml(data.metric_label) + ": " + fmt(data.nodes.value[i]));
    if (data.nodes.frontier[i]) lines.push(isAnonymous(i) ? "minimal anonymous" : "maximal not anonymous");
    return lines.join("<br>");
  }
  // QI names and labels are user data; plotly draws hover text as pseudo-HTML and decodes these entities back
  function escapeHtml(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function visible() {
    var n = data.size, nodes = data.nodes, keep = new Uint8Array(n), i;
    var mode = $("lattice-show").value;
    var onlyAnon = $("lattice-only-anonymous").checked;
    var lo = parseFloat($("lattice-min").value), hi = parseFloat($("lattice-max").value);
    if (mode === "all") {
      keep.fill(1);
    } else {
      for (i = 0; i < n; i++) if (nodes.frontier[i]) keep[i] = 1;
      var best = Math.max(parseInt($("lattice-best").value, 10) || 0, 0);
      if (best > 0) {
        var cand = [];
        for (i = 0; i < n; i++) {
          var v = nodes.value[i];
          if (isAnonymous(i) && v !== null && (isNaN(lo) || v >= lo) && (isNaN(hi) || v <= hi)) cand.push(i);
        }
        cand.sort(function (a, b) { return nodes.value[a] - nodes.value[b] || nodes.rank[a] - nodes.rank[b]; });
        for (i = 0; i < Math.min(best, cand.length); i++) keep[cand[i]] = 1;
      }
    }
    var out = [];
    for (i = 0; i < n; i++) {
      if (!keep[i]) continue;
      if (onlyAnon && !isAnonymous(i)) continue;
      var val = nodes.value[i];
      if ((!isNaN(lo) || !isNaN(hi)) && (val === null || (!isNaN(lo) && val < lo) || (!isNaN(hi) && val > hi))) continue;
      out.push(i);
    }
    return out;
  }

  // WebGL only for many points: a WebGL context costs about a second to start in a browser without a GPU,
  // more than SVG takes to draw a few thousand markers
  var GL_FROM = 3000;

  function trace(name, idx, marker, gl) {
    var xs = [], ys = [], texts = [];
    idx.forEach(function (i) { xs.push(data.nodes.x[i]); ys.push(data.nodes.rank[i]); texts.push(hoverText[i] || (hoverText[i] = hover(i))); });
    return { type: gl ? "scattergl" : "scatter", mode: "markers", name: name, x: xs, y: ys, customdata: idx,
             text: texts, hovertemplate: "%{text}<extra></extra>", marker: marker };
  }

  function draw() {
    var idx = visible();
    var anon = [], fail = [];
    var index = data.index;
    idx.forEach(function (i) { (isAnonymous(i) ? anon : fail).push(i); });
    var opt = index[data.optimum], res = index[data.result];
    var kept = Object.keys(data.kept || {}).map(function (k) { return index[k]; })
      .filter(function (i) { return i !== undefined; });
    if (res !== undefined) kept.push(res);
    var traces = [
      trace("not anonymous", fail, { color: "#c0c8d2", size: 6 }, idx.length > GL_FROM),
      trace("anonymous", anon, { color: "#2f855a", size: 7 }, idx.length > GL_FROM),
      trace("this job's result / kept", kept, { color: "rgba(0,0,0,0)", size: 16,
        line: { color: "#1f4e79", width: 2.5 }, symbol: "circle-open" }, false),
    ];
    if (opt !== undefined) traces.push(trace("optimum", [opt], { color: "#d69e2e", size: 18, symbol: "star",
      line: { color: "#7a5313", width: 1 } }, false));
    if (selected !== null) traces.push(trace("clicked", [selected], { color: "rgba(0,0,0,0)", size: 22,
      symbol: "circle-open", line: { color: "#c53030", width: 2.5 } }, false));
    var layout = {
      template: "none", paper_bgcolor: "#ffffff", plot_bgcolor: "#ffffff", height: 620, dragmode: "zoom",
      // the legend above the plot, the axis title below it: they never overlap
      margin: { l: 60, r: 20, t: 40, b: 40 }, hovermode: "closest", showlegend: true,
      legend: { orientation: "h", x: 0, y: 1.01, yanchor: "bottom" },
      font: { family: "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", size: 12, color: "#1d2733" },
      hoverlabel: { bgcolor: "#ffffff", align: "left" },
      // x only spreads the nodes of a level: its numbers mean nothing, so none is shown
      xaxis: { title: { text: "the nodes of each level, side by side" }, zeroline: false, showgrid: false,
               showticklabels: false },
      yaxis: { title: { text: "level (sum of the QI levels)" }, dtick: 1, gridcolor: "#e6ebf1" },
      uirevision: "lattice",
    };
    window.Plotly.react(chart, traces, layout, config);
    text(statusEl, "Showing " + idx.length.toLocaleString("en-US") + " of " + data.size.toLocaleString("en-US") +
      " nodes (" + data.anonymous.toLocaleString("en-US") + " anonymous, " +
      data.frontier_count.toLocaleString("en-US") + " on the frontier). Lattice " + data.source + ".");
  }

  function showNode(i) {
    selected = i;
    draw();
    var levels = data.nodes.levels[i];
    var box = $("lattice-node");
    box.hidden = false;
    text($("node-levels"), levels);
    $("keep-levels").value = levels;
    var compareB = $("compare-b");  // the clicked node becomes solution B of "compare two nodes"
    if (compareB) compareB.value = levels;
    var compareLink = $("node-compare-link");  // and the node card's link: the run's result (A) beside it (B)
    if (compareLink && compareB) {
      compareLink.href = compareLink.getAttribute("href").split("?")[0] + "?a=" +
        encodeURIComponent($("compare-a").value) + "&b=" + encodeURIComponent(levels);
    }
    var msg = $("node-message");
    msg.hidden = false;
    msg.className = "message";
    text(msg, "Applying the transformation…");
    $("node-compare").hidden = true;
    fetch(urls.node + "?levels=" + encodeURIComponent(levels), { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (d) {
        if (selected !== i) return;
        renderNode(d, i);
      })
      .catch(function (e) { msg.className = "message message-error"; text(msg, "Could not load the node: " + e); });
  }

  function renderNode(d, i) {
    var msg = $("node-message");
    var keepBtn = $("keep-button"), keptLink = $("node-kept-link");
    var tbody = $("node-transformation").tBodies[0];
    clear(tbody);
    var lv = data.nodes.levels[i].split(",");
    data.qi.forEach(function (q, j) {
      var tr = make("tr");
      tr.appendChild(make("td", "", q));
      if (weighted) tr.appendChild(make("td", "num", weightOf[q] !== undefined ? weightOf[q] : "\u2014"));
      tr.appendChild(make("td", "num", lv[j]));
      tr.appendChild(make("td", "", data.labels[j][+lv[j]]));
      tbody.appendChild(tr);
    });
    var mbody = $("node-metrics").tBodies[0];
    clear(mbody);
    keptLink.hidden = !d.kept;
    if (d.kept) keptLink.href = d.kept;
    if (d.error || !d.anonymous) {
      msg.hidden = false;
      msg.className = "message " + (d.error ? "message-error" : "message-warning");
      text(msg, d.error || d.message);
      keepBtn.disabled = true;
      return;
    }
    keepBtn.disabled = false;
    msg.hidden = true;
    d.metric_rows.forEach(function (m) {
      var tr = make("tr");
      tr.appendChild(make("td", "", m.label));
      // the catalogue's texts (as on the result page); a node evaluated before they were sent: its numbers
      tr.appendChild(make("td", "num", m.before_text !== undefined ? m.before_text : fmt(m.before)));
      tr.appendChild(make("td", "num", m.after_text !== undefined ? m.after_text : fmt(m.after)));
      mbody.appendChild(tr);
    });
    fillTable($("node-original"), d.table.original_columns, d.table.rows, "original", d.table.identifying);
    fillTable($("node-anonymized"), d.table.anonymized_columns, d.table.rows, "anonymized", []);
    $("node-compare").hidden = false;
  }

  function fillTable(table, columns, rows, side, struck) {
    clear(table);
    var head = make("thead"), hr = make("tr");
    hr.appendChild(make("th", "num", "#"));
    columns.forEach(function (c) { hr.appendChild(make("th", struck.indexOf(c) >= 0 ? "struck" : "", c)); });
    hr.querySelectorAll("th").forEach(function (th) { th.setAttribute("scope", "col"); });
    head.appendChild(hr);
    table.appendChild(head);
    var body = make("tbody");
    rows.forEach(function (row) {
      var tr = make("tr", row.suppressed ? "suppressed" : "");
      tr.appendChild(make("td", "num muted", String(row.number)));
      row[side].forEach(function (v, j) {
        var cls = side === "anonymized" ? (row.changed[j] ? "changed" : "")
          : (struck.indexOf(columns[j]) >= 0 ? "struck" : "");
        var td = make("td", cls, v);
        if (cls === "changed") {  // marked by a symbol and a hidden word as well as by its colour
          var mark = make("span", "gen-mark", "\u25b4");
          mark.setAttribute("aria-hidden", "true");
          td.insertBefore(mark, td.firstChild);
          td.appendChild(make("span", "visually-hidden", " (generalized)"));
        }
        var length = row.cut && row.cut[side][j];
        if (length) td.title = length.toLocaleString("en-US") + " characters; cut for the page";
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    table.appendChild(body);
  }

  // the lattice, drawn once as the run's search left it (d.partial: tags, values where checked) while a worker
  // evaluates every node, then again whole (the nodes keep their order: a clicked node stays selected)
  function showLattice(d) {
    var first = data === null;
    data = d;
    data.index = {};
    hoverText = [];
    d.nodes.levels.forEach(function (l, i) { data.index[l] = i; });
    text($("lattice-summary"), d.size.toLocaleString("en-US") + " nodes, optimum " + d.optimum +
      (d.partial ? " (the run's search; every node being evaluated)" : ""));
    if (first) {
      ["lattice-show", "lattice-best", "lattice-min", "lattice-max", "lattice-only-anonymous"].forEach(function (id) {
        $(id).addEventListener("change", draw);
      });
    }
    draw();
    if (first) {
      chart.on("plotly_click", function (ev) {
        if (ev && ev.points && ev.points.length) showNode(ev.points[0].customdata);
      });
    }
  }

  // While a worker evaluates the lattice (HTTP 202): its progress and phase, polled every second.
  function showPending(d) {
    var pct = Math.round((d.progress || 0) * 1000) / 10;
    $("lattice-pending").classList.remove("hidden");
    $("lattice-progress-bar").style.width = pct + "%";
    $("lattice-pending").querySelector("[role=progressbar]").setAttribute("aria-valuenow", String(pct));
    text($("lattice-progress-percent"), pct + "%");
    text($("lattice-progress-phase"), d.phase || "");
    $("lattice-cancel-form").setAttribute("action", d.cancel_url);
    if (data === null) text(statusEl, "Evaluating the lattice on a worker…");
  }

  function load(retry) {
    $("lattice-retry").classList.add("hidden");
    // once the run's search's nodes are drawn, the polls ask for the progress alone
    var query = [retry ? "retry=1" : "", data !== null ? "known=0" : ""].filter(Boolean).join("&");
    fetch(urls.data + (query ? "?" + query : ""), { credentials: "same-origin" })
      .then(function (r) { return r.json().then(function (d) { return { status: r.status, body: d }; }); })
      .then(function (res) {
        var d = res.body;
        if (res.status === 202 && d.pending) {
          if (d.lattice && data === null) showLattice(d.lattice);
          showPending(d);
          setTimeout(function () { load(false); }, 1000);
          return;
        }
        $("lattice-pending").classList.add("hidden");
        if (d.error) {
          statusEl.className = "message message-error";
          text(statusEl, d.error);
          if (d.retry) $("lattice-retry").classList.remove("hidden");
          return;
        }
        statusEl.className = "lattice-status muted small";
        showLattice(d);
      })
      .catch(function (e) { statusEl.className = "message message-error"; text(statusEl, "Could not load the lattice: " + e); });
  }

  function start() {
    if (typeof window.Plotly === "undefined") { text(statusEl, "The plotting library did not load."); return; }
    $("lattice-retry").addEventListener("click", function () { load(true); });
    // the filter redraws on change; Enter in one of its boxes must not submit (and reload) the page
    $("lattice-filter").addEventListener("submit", function (ev) { ev.preventDefault(); });
    $("lattice-cancel-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      var form = ev.target;
      fetch(form.getAttribute("action"), { method: "POST", credentials: "same-origin", body: new FormData(form) });
    });
    load(false);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
