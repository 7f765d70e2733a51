// Differential privacy page: the true and released counts as grouped bars, from the server-built figure
// (json_script, labels already escaped for plotly). plotly.min.js is served from /static/vendor/plotly/.
(function () {
  "use strict";
  var dataEl = document.getElementById("dp-data");
  var el = document.getElementById("chart-dp");
  if (!dataEl || !el || typeof window.Plotly === "undefined") return;
  var fig = JSON.parse(dataEl.textContent);
  if (!fig) return;
  window.Plotly.react(el, fig.data, fig.layout, { responsive: true, displaylogo: false });
})();
