// Models trained on the release: one plotly bar chart (original, release and baseline per model and
// metric) from the server-built figure (json_script). plotly.min.js is served from /static/vendor/plotly/.
(function () {
  "use strict";
  var dataEl = document.getElementById("utility-data");
  var el = document.getElementById("chart-utility");
  if (!dataEl || !el || typeof window.Plotly === "undefined") return;
  var fig = JSON.parse(dataEl.textContent);
  var config = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
  window.Plotly.react(el, fig.data, fig.layout, config);
})();
